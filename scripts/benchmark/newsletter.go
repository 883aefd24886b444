package main

// The newsletter part of the benchmark (issue 44): a post mailed to 10,000
// members through a real SMTP server (mailpit), sent by `bin/marquee serve`
// in its own process on PostgreSQL. It prints the landing page, the
// community page and the feed call at a constant rate before the send and
// during it, and the send's own rate (recipients written, first to last
// mail). `scripts/bench newsletter` runs it; not part of a full run.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"marquee/store"
)

var (
	newsletterMembers  = envOr("BENCH_NEWSLETTER_MEMBERS", "10000")
	newsletterRate     = envOr("BENCH_NEWSLETTER_RATE", "0")
	newsletterPageRate = envOr("BENCH_NEWSLETTER_PAGE_RATE", "200")
	newsletterFor      = envOr("BENCH_NEWSLETTER_DURATION", "10s")
	newsletterDatabase = envOr("BENCH_NEWSLETTER_DATABASE", "marquee_bench_newsletter")
)

func newsletterBench(ctx context.Context) error {
	members, err := strconv.Atoi(newsletterMembers)
	if err != nil || members <= 0 {
		return fmt.Errorf("BENCH_NEWSLETTER_MEMBERS: %q", newsletterMembers)
	}
	pageRate, err := strconv.Atoi(newsletterPageRate)
	if err != nil || pageRate <= 0 {
		return fmt.Errorf("BENCH_NEWSLETTER_PAGE_RATE: %q", newsletterPageRate)
	}
	dur, err := time.ParseDuration(newsletterFor)
	if err != nil {
		return fmt.Errorf("BENCH_NEWSLETTER_DURATION: %w", err)
	}
	bin, err := builtBinary()
	if err != nil {
		return err
	}
	mailpitBin, err := exec.LookPath("mailpit")
	if err != nil {
		return fmt.Errorf("mailpit not found (make services installs it): %w", err)
	}

	dsn, drop, err := freshDatabase(ctx, newsletterDatabase)
	if err != nil {
		return err
	}
	defer drop()

	tmp, err := os.MkdirTemp("", "marquee-bench-newsletter-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	smtpPort, err := freePort()
	if err != nil {
		return err
	}
	mailpitPort, err := freePort()
	if err != nil {
		return err
	}
	// --max 0 keeps every mail (mailpit keeps 500 by default).
	mp := exec.Command(mailpitBin, "-s", fmt.Sprintf("127.0.0.1:%d", smtpPort), "-l", fmt.Sprintf("127.0.0.1:%d", mailpitPort),
		"-d", filepath.Join(tmp, "mailpit.db"), "--max", "0")
	if err := mp.Start(); err != nil {
		return fmt.Errorf("start mailpit: %w", err)
	}
	defer func() { _ = mp.Process.Kill(); _ = mp.Wait() }()
	if err := waitForURL(fmt.Sprintf("http://127.0.0.1:%d/api/v1/info", mailpitPort), 30*time.Second); err != nil {
		return fmt.Errorf("mailpit: %w", err)
	}

	port, err := freePort()
	if err != nil {
		return err
	}
	authPort, err := freePort()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "DATABASE_URL="+dsn, "MEDIA_DIR="+filepath.Join(tmp, "media"), "S3_ENDPOINT=",
		fmt.Sprintf("PORT=%d", port), fmt.Sprintf("AUTH_PORT=%d", authPort),
		fmt.Sprintf("SMTP_URL=smtp://127.0.0.1:%d", smtpPort), "MAIL_FROM=Bench <mail@bench.test>", "NEWSLETTER_RATE="+newsletterRate)
	if os.Getenv("REDIS_URL") == "" {
		env = append(env, "REDIS_URL=")
	}
	for _, args := range [][]string{{"migrate"}, {"seed-demo"}} {
		c := exec.CommandContext(ctx, bin, args...)
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", args[0], err, out)
		}
	}

	a, err := assembleLike(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	db, st := a.DB, a.Storage
	app, err := st.AppByIDOrName(ctx, "demo")
	if err != nil {
		return err
	}
	// The members: followers of the demo app, written in two statements.
	if _, err := db.ExecContext(ctx, `INSERT INTO users (id, username, email, email_verified, password_hash)
		SELECT 'nlbench' || i, 'nlbench' || i, 'nlbench' || i || '@bench.test', true, 'x' FROM generate_series(1, ?) AS i`, members); err != nil {
		return fmt.Errorf("bench members: %w", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO memberships (id, app_id, user_id, role)
		SELECT 'nlbench' || i, ?, 'nlbench' || i, ? FROM generate_series(1, ?) AS i`, app.ID, store.RoleFollower, members); err != nil {
		return fmt.Errorf("bench memberships: %w", err)
	}
	settle(ctx, db)
	creator, err := st.UserByEmail(ctx, "creator@demo.test")
	if err != nil {
		return err
	}
	token, err := st.CreateSession(ctx, creator.ID, "bench")
	if err != nil {
		return err
	}
	communityID := ""
	if err := db.NewSelect().Model((*store.Community)(nil)).Column("id").Where("app_id = ?", app.ID).Scan(ctx, &communityID); err != nil {
		return err
	}

	serve := exec.Command(bin, "serve")
	serve.Env = env
	if err := serve.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	defer func() { _ = serve.Process.Signal(os.Interrupt); _ = serve.Wait() }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitForURL(base+"/healthz", 30*time.Second); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 512, MaxIdleConnsPerHost: 512, MaxConnsPerHost: 512, DisableCompression: true,
	}}
	calls := []apiCall{
		{name: "landing page (visitor)", urls: []string{"/apps/demo"}},
		{name: "community page (visitor)", urls: []string{"/apps/demo/community"}},
		{name: "feed call", urls: []string{"/api/community/" + communityID + "/posts?limit=20&type=POST"}},
	}
	for _, c := range calls {
		for i := 0; i < 3; i++ {
			if status, err := apiGet(client, base+c.urls[0], false, ""); err != nil || status != http.StatusOK {
				return fmt.Errorf("warm-up GET %s: %d %v", c.urls[0], status, err)
			}
		}
	}

	fmt.Printf("\nNewsletter: a post mailed to %d members through mailpit (NEWSLETTER_RATE=%s), PostgreSQL, one `serve` process; pages and the feed at a constant %d requests/s for %s each, before and during the send\n",
		members, newsletterRate, pageRate, dur)
	fmt.Printf("load average before: %s\n\n", loadAvg())
	before := make([]apiResult, len(calls))
	for i, c := range calls {
		before[i] = constantRate(client, base, c, "", pageRate, dur)
	}

	// The post, as the creator publishes it from the composer.
	req, _ := http.NewRequest(http.MethodPost, base+"/api/messages",
		strings.NewReader(`{"type":"POST","communityId":"`+communityID+`","content":"Bench letter","newsletter":true}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "marquee_session="+token)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("post: %d %s", res.StatusCode, body)
	}
	var postID string
	if err := db.NewSelect().Model((*store.Message)(nil)).Column("id").Where("content = ?", "Bench letter").Scan(ctx, &postID); err != nil {
		return err
	}
	sent := func() (done, total int) {
		var counts []struct {
			State string
			N     int
		}
		_ = db.NewSelect().Model((*store.NewsletterRecipient)(nil)).ColumnExpr("state, COUNT(*) AS n").
			Where("message_id = ?", postID).Group("state").Scan(ctx, &counts)
		for _, c := range counts {
			total += c.N
			if c.State == store.RecipientSent || c.State == store.RecipientFailed || c.State == store.RecipientSkipped {
				done += c.N
			}
		}
		return done, total
	}
	// The pages while it sends: it must still be sending when they start.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if d, total := sent(); d > 0 || total > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the newsletter did not start within a minute")
		}
	}
	during := make([]apiResult, len(calls))
	for i, c := range calls {
		during[i] = constantRate(client, base, c, "", pageRate, dur)
	}
	doneDuring, _ := sent()
	for deadline := time.Now().Add(30 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if d, total := sent(); total > 0 && d == total {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the newsletter did not finish within 30 minutes")
		}
	}
	var first, last time.Time
	if err := db.NewSelect().Model((*store.NewsletterRecipient)(nil)).ColumnExpr("MIN(sent_at), MAX(sent_at)").
		Where("message_id = ?", postID).Scan(ctx, &first, &last); err != nil {
		return err
	}
	done, total := sent()
	var failed int
	if err := db.NewSelect().Model((*store.NewsletterRecipient)(nil)).ColumnExpr("COUNT(*)").
		Where("message_id = ? AND state <> ?", postID, store.RecipientSent).Scan(ctx, &failed); err != nil {
		return err
	}

	fmt.Println("| call | before: p50 / p99 / max | during the send: p50 / p99 / max | failed before / during |")
	fmt.Println("| --- | --- | --- | ---: |")
	for i, c := range calls {
		b, d := before[i], during[i]
		fmt.Printf("| %s | %s / %s / %s | %s / %s / %s | %d / %d |\n", c.name, ms(b.p50), ms(b.p99), ms(b.max), ms(d.p50), ms(d.p99), ms(d.max), b.failed, d.failed)
	}
	took := last.Sub(first)
	rate := 0.0
	if took > 0 {
		rate = float64(done) / took.Seconds()
	}
	fmt.Printf("\nsend: %d recipients, %d sent, %d not sent; %d done while the pages ran; first to last mail %s: %.0f mails/s; load average after: %s\n\n",
		total, done-failed, failed, doneDuring, took.Round(time.Millisecond), rate, loadAvg())
	for i, c := range calls {
		target(c.name+" p99 during the send", float64(during[i].p99.Microseconds())/1000, 20, false, " ms")
	}
	return nil
}
