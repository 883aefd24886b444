package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
)

// concurrently sends n requests at once and counts the statuses; every
// 429 must be the envelope with a message and Retry-After.
func concurrently(t *testing.T, n int, do func(i int) response) map[int]int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(i)
			mu.Lock()
			defer mu.Unlock()
			codes[r.Status]++
			if r.Status == http.StatusTooManyRequests {
				var env struct {
					Success bool   `json:"success"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal([]byte(r.Body), &env); err != nil || env.Success || env.Message == "" || r.Header.Get("Retry-After") == "" {
					t.Errorf("429 without the envelope or Retry-After: %s %v", r.Body, r.Header)
				}
			}
		}()
	}
	wg.Wait()
	return codes
}

// One account cannot create apps without end (issue 41 item 10): of 50
// creations sent at once with distinct names, the day's limit (default 5)
// succeed and the rest answer 429; another account is not held by it.
func TestAppCreationLimitPerAccount(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	ctx := context.Background()
	uid, h := newCreator(t, ts, "prolific@studio.test", "prolific")
	codes := concurrently(t, 50, func(i int) response {
		return ts.do(t, "POST", "/api/apps", strings.NewReader(fmt.Sprintf(`{"name":"flood-%d"}`, i)), jsonHeaders(h))
	})
	if codes[201] != DefaultAppsPerDay || codes[429] != 50-DefaultAppsPerDay {
		t.Errorf("statuses %v, want %d created and the rest 429", codes, DefaultAppsPerDay)
	}
	n, err := ts.store.DB().NewSelect().Model((*store.App)(nil)).Where("creator_id = ?", uid).Count(ctx)
	if err != nil || int(n) != DefaultAppsPerDay {
		t.Errorf("apps of the account: %d %v", n, err)
	}
	_, other := newCreator(t, ts, "modest@studio.test", "modest")
	if r := ts.do(t, "POST", "/api/apps", strings.NewReader(`{"name":"modest-app"}`), jsonHeaders(other)); r.Status != 201 {
		t.Errorf("another account: %d %s", r.Status, r.Body)
	}
	// The limit is a setting.
	cfg, err := LoadConfig(func(k string) string { return map[string]string{"APPS_PER_DAY": "12", "WALLET_PENDING_TOPUPS": "7"}[k] })
	if err != nil || cfg.Limits.Apps.Limit != 12 || cfg.Limits.PendingTopups != 7 {
		t.Errorf("APPS_PER_DAY, WALLET_PENDING_TOPUPS: %+v %v", cfg.Limits, err)
	}
	for _, bad := range []map[string]string{{"APPS_PER_DAY": "0"}, {"WALLET_PENDING_TOPUPS": "many"}} {
		if _, err := LoadConfig(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// One member cannot start wallet top-ups without end (issue 41 item 10):
// of 50 started at once, the pending limit (default 3) reach Stripe and the
// rest answer 429 without creating a PaymentIntent.
func TestWalletTopupPendingLimit(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newPayFixture(t, db, func(cfg *Config) { cfg.WalletTopupAmounts = []int64{1000} })
	as := commUser(t, f.ts, "follower@demo.test")
	st := "/api/store/" + f.shop.ID + "/wallet/topups"
	before := f.stripe.IntentCount()
	codes := concurrently(t, 50, func(int) response {
		return f.ts.do(t, "POST", st, body(map[string]any{"amount": 1000, "method": "stripe"}), as)
	})
	if codes[201] != DefaultPendingTopups || codes[429] != 50-DefaultPendingTopups {
		t.Errorf("statuses %v, want %d started and the rest 429", codes, DefaultPendingTopups)
	}
	if got := f.stripe.IntentCount() - before; got != DefaultPendingTopups {
		t.Errorf("%d PaymentIntents created, want %d", got, DefaultPendingTopups)
	}
	n, err := db.NewSelect().Model((*store.WalletTopup)(nil)).Where("user_id = ? AND status = ?", f.userID(t, "follower@demo.test"), store.TopupPending).Count(context.Background())
	if err != nil || int(n) != DefaultPendingTopups {
		t.Errorf("pending top-ups: %d %v", n, err)
	}
}

// Forgot-password does the same work whether or not an account uses the
// address (issue 41 item 10): the same answer, and the same writes (one
// password_reset job, no token and no mail yet), so neither its time nor
// its effects tell; the job then mails only the account.
func TestForgotPasswordSameWorkEitherWay(t *testing.T) {
	t.Parallel()
	ts, _ := mailServer(t, nil)
	ctx := context.Background()
	counts := func() map[string]int {
		out := map[string]int{}
		for name, q := range map[string]*bun.SelectQuery{
			"jobs":   ts.store.DB().NewSelect().Model((*store.JobOutbox)(nil)).Where("kind = ?", store.JobPasswordReset),
			"tokens": ts.store.DB().NewSelect().Model((*store.AccountToken)(nil)),
			"mails":  ts.store.DB().NewSelect().Model((*store.Mail)(nil)),
			"outbox": ts.store.DB().NewSelect().Model((*store.JobOutbox)(nil)),
		} {
			n, err := q.Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = int(n)
		}
		return out
	}
	ask := func(email string) (response, map[string]int) {
		before := counts()
		r := ts.do(t, "POST", "/authenticate/forgot?app=demo", strings.NewReader("email="+email), formHeaders)
		after := counts()
		delta := map[string]int{}
		for k := range after {
			delta[k] = after[k] - before[k]
		}
		return r, delta
	}
	known, knownWork := ask("follower%40demo.test")
	unknown, unknownWork := ask("nobody%40demo.test")
	if known.Status != unknown.Status || known.Body != unknown.Body {
		t.Errorf("answers differ: %d vs %d", known.Status, unknown.Status)
	}
	want := map[string]int{"jobs": 1, "outbox": 1, "tokens": 0, "mails": 0}
	for k, v := range want {
		if knownWork[k] != v || unknownWork[k] != v {
			t.Errorf("%s written: known address %d, unknown %d, want %d for both", k, knownWork[k], unknownWork[k], v)
		}
	}
	if n := runMailJobs(t, ts); n != 1 {
		t.Errorf("%d mails after the jobs, want 1 (the account's)", n)
	}
}
