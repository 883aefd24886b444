package server

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"marquee/scripts/seed"
	"marquee/store"
)

// payoutSettings are every form that decides where an app's money goes:
// the PayPal payee, connecting the Stripe account, and the Stripe dashboard
// (where its bank account is changed). Each changed tells what it changed.
var payoutSettings = []struct {
	name, path, values, audit string
	// changed reports whether the setting took effect.
	changed func(t *testing.T, f *payFixture) bool
}{
	{"paypal payee", "/apps/demo/studio/paypal", "merchantId=ABCDEFGHJKLMN", "paypal.payee", func(t *testing.T, f *payFixture) bool {
		p, err := f.ts.store.PayPalPayeeOf(context.Background(), f.demo.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p != nil
	}},
	{"stripe connect", "/apps/demo/studio/payouts/connect", "", "payouts.connect", func(t *testing.T, f *payFixture) bool {
		pa, err := f.ts.store.PayoutAccountOf(context.Background(), f.demo.ID)
		if err != nil {
			t.Fatal(err)
		}
		return pa != nil && pa.StripeAccountID != ""
	}},
	{"stripe dashboard", "/apps/demo/studio/payouts/dashboard", "", "payouts.dashboard", nil},
}

func auditLines(t *testing.T, f *payFixture, action string) int {
	t.Helper()
	n, err := f.ts.store.DB().NewSelect().Table("moderation_log").Where("app_id = ? AND action = ?", f.demo.ID, action).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func payoutMails(t *testing.T, f *payFixture) int {
	t.Helper()
	n, err := f.ts.store.DB().NewSelect().Model((*store.Mail)(nil)).
		Where("kind = ? AND to_addr = ?", store.MailPayoutChanged, "creator@demo.test").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// Every setting that decides where an app's money goes is the creator's
// alone and needs their password again: an ADMIN (with their own password)
// is refused, and so is the creator's session without the password or with
// a wrong one, and nothing changes. What the creator changes is written to
// the audit log and mailed to them. (An ADMIN could set the PayPal payee,
// and no change was logged or mailed.)
func TestPayoutSettingsAreTheCreatorsAlone(t *testing.T) {
	t.Parallel()
	f := newConnectFixture(t, demoDB(t), false)
	creator := f.creatorForm(t)
	admin := withSession(sessionFor(t, f.ts, "admin@demo.test"), "Content-Type", "application/x-www-form-urlencoded")
	with := func(values, password string) string {
		v, _ := url.ParseQuery(values)
		if password != "" {
			v.Set("password", password)
		}
		return v.Encode()
	}
	for _, s := range payoutSettings {
		for _, try := range []struct {
			who      string
			as       map[string]string
			password string
			status   int
		}{
			{"an admin with their password", admin, seed.DemoPassword, 403},
			{"the creator without the password", creator, "", 400},
			{"the creator with a wrong password", creator, "not-the-password", 400},
		} {
			r := f.ts.do(t, "POST", s.path, strings.NewReader(with(s.values, try.password)), try.as)
			if r.Status != try.status {
				t.Fatalf("%s by %s: %d, want %d: %.300s", s.name, try.who, r.Status, try.status, r.Body)
			}
			if try.status == 400 && !strings.Contains(r.Body, "Enter your password to change where this app") {
				t.Fatalf("%s by %s: the page does not ask for the password", s.name, try.who)
			}
			if s.changed != nil && s.changed(t, f) {
				t.Fatalf("%s by %s changed the setting", s.name, try.who)
			}
			if n := auditLines(t, f, s.audit); n != 0 {
				t.Fatalf("%s by %s: %d audit lines", s.name, try.who, n)
			}
		}
	}
	if n := payoutMails(t, f); n != 0 {
		t.Fatalf("%d payout mails for refused changes", n)
	}

	// The creator with the password: each takes effect, is logged and
	// (the settings) mailed.
	r := f.ts.do(t, "POST", "/apps/demo/studio/paypal", strings.NewReader(with("merchantId=ABCDEFGHJKLMN", seed.DemoPassword)), creator)
	if r.Status != 303 || !payoutSettings[0].changed(t, f) || auditLines(t, f, "paypal.payee") != 1 || payoutMails(t, f) != 1 {
		t.Fatalf("creator's payee: %d, audit %d, mails %d", r.Status, auditLines(t, f, "paypal.payee"), payoutMails(t, f))
	}
	// Saving the same payee again changes nothing, so nothing is sent.
	f.ts.do(t, "POST", "/apps/demo/studio/paypal", strings.NewReader(with("merchantId=ABCDEFGHJKLMN", seed.DemoPassword)), creator)
	if auditLines(t, f, "paypal.payee") != 1 || payoutMails(t, f) != 1 {
		t.Fatal("an unchanged payee was logged or mailed again")
	}
	f.onboard(t) // the connect form with the password
	if !payoutSettings[1].changed(t, f) || auditLines(t, f, "payouts.connect") != 1 || payoutMails(t, f) != 2 {
		t.Fatalf("connect: audit %d, mails %d", auditLines(t, f, "payouts.connect"), payoutMails(t, f))
	}
	r = f.ts.do(t, "POST", "/apps/demo/studio/payouts/dashboard", strings.NewReader(with("", seed.DemoPassword)), creator)
	if r.Status != 303 || auditLines(t, f, "payouts.dashboard") != 1 {
		t.Fatalf("dashboard: %d, audit %d", r.Status, auditLines(t, f, "payouts.dashboard"))
	}
	var m store.Mail
	if err := f.ts.store.DB().NewSelect().Model(&m).Where("kind = ?", store.MailPayoutChanged).Order("created_at ASC").Limit(1).
		Scan(context.Background()); err != nil || !strings.Contains(m.Content, "ABCDEFGHJKLMN") || !m.Transactional {
		t.Fatalf("payee mail: %+v %v", m, err)
	}
}
