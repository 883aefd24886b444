package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"

	"marquee/scripts/seed"
	"marquee/server/jobs"
	"marquee/server/payments/paymentstest"
	"marquee/store"
	"marquee/store/storetest"
)

const testConnectSecret = "whsec_connect_marquee"

// newConnectFixture is newPayFixture with Stripe Connect on: a Connect
// endpoint secret, a 5% platform fee, and payouts required or not.
func newConnectFixture(t *testing.T, db *bun.DB, required bool) *payFixture {
	t.Helper()
	f := newPayFixture(t, db, func(cfg *Config) {
		cfg.Stripe.ConnectWebhookSecret = testConnectSecret
		cfg.PayoutsRequired = required
		cfg.PlatformFeeBP = 500
	})
	f.stripe.ConnectWebhookSecret = testConnectSecret
	return f
}

func connectHook(t *testing.T, f *payFixture, payload []byte, header string) response {
	t.Helper()
	return f.ts.do(t, "POST", "/api/webhooks/stripe-connect", strings.NewReader(string(payload)),
		map[string]string{"Stripe-Signature": header, "Content-Type": "application/json"})
}

func (f *payFixture) creatorForm(t *testing.T) map[string]string {
	t.Helper()
	return withSession(sessionFor(t, f.ts, "creator@demo.test"), "Content-Type", "application/x-www-form-urlencoded")
}

// connect is the creator's Connect click: it answers the onboarding link
// the studio sent the browser to.
func (f *payFixture) connect(t *testing.T) string {
	t.Helper()
	r := f.ts.do(t, "POST", "/apps/demo/studio/payouts/connect", strings.NewReader("password="+seed.DemoPassword), f.creatorForm(t))
	loc := r.Header.Get("Location")
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(loc, f.stripe.URL+"/connect/onboarding/") {
		t.Fatalf("connect: %d %q %.300s", r.Status, loc, r.Body)
	}
	return loc
}

// onboard connects the demo app and plays the creator through Stripe's
// onboarding, delivering the account.updated event to the Connect
// endpoint; it answers the account id.
func (f *payFixture) onboard(t *testing.T) string {
	t.Helper()
	link := f.connect(t)
	res, err := noRedirect.PostForm(link, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "http://main.test/apps/demo/studio/payouts/return" {
		t.Fatalf("onboarding did not return to the studio: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	ev := lastEvent(t, f.stripe, "account.updated")
	if r := connectHook(t, f, ev.Payload, ev.Header); r.Status != 200 {
		t.Fatalf("account.updated: %d %s", r.Status, r.Body)
	}
	ids := f.stripe.AccountIDs()
	if len(ids) != 1 {
		t.Fatalf("accounts %v", ids)
	}
	return ids[0]
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func lastEvent(t *testing.T, s *paymentstest.Stripe, typ string) paymentstest.SignedEvent {
	t.Helper()
	evs := s.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return evs[i]
		}
	}
	t.Fatalf("no %s event", typ)
	return paymentstest.SignedEvent{}
}

func methodsOf(t *testing.T, f *payFixture, as map[string]string) []any {
	t.Helper()
	a := decodePay(t, f.ts.do(t, "GET", "/api/store/"+f.shop.ID+"/stripe-payments/config", nil, as))
	m, _ := a.Data["methods"].([]any)
	return m
}

func hasMethod(ms []any, name string) bool {
	for _, m := range ms {
		if m == name {
			return true
		}
	}
	return false
}

// The creator connects from the studio (twenty clicks at once make one
// Express account), goes through Stripe's onboarding and comes back; the
// account's state comes from account.updated on the Connect endpoint, which
// only the Connect secret signs, and a late older event does not undo it.
// With PAYOUTS_REQUIRED the app's members are offered cards only from then
// on, and the Stripe dashboard button opens a login link.
func TestPayoutsOnboardingToChargesEnabled(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newConnectFixture(t, db, true)
		ctx := context.Background()
		buyer := commUser(t, f.ts, "follower@demo.test")
		creator := f.creatorForm(t)

		// No account: no card.
		if ms := methodsOf(t, f, buyer); hasMethod(ms, "stripe") || !hasMethod(ms, "musepay") {
			t.Fatalf("methods before onboarding: %v", ms)
		}
		o := f.order(t, "follower@demo.test", 5000)
		commExpect(t, "card before onboarding", f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o.ID}), 400, "not available")
		da := decodePay(t, f.ts.do(t, "POST", "/api/donations/create", body(map[string]any{"appId": "demo", "amount": 500, "currency": "USD"}), buyer))
		donation, _ := da.Data["id"].(string)
		commExpect(t, "card donation before onboarding", f.ts.do(t, "POST", "/api/donations/process",
			body(map[string]any{"donationId": donation, "paymentMethod": "stripe"}), buyer), 400, "not available")
		if n := f.stripe.IntentCount(); n != 0 {
			t.Fatalf("%d intents made for an app without an account", n)
		}
		page := f.ts.do(t, "GET", "/apps/demo/studio/payouts", nil, creator)
		if page.Status != 200 || !strings.Contains(page.Body, "Not connected") || !strings.Contains(page.Body, "Connect with Stripe") {
			t.Fatalf("payouts page: %d %.500s", page.Status, page.Body)
		}

		// Twenty Connect clicks at once: one account, every click sent to
		// an onboarding link.
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := f.ts.do(t, "POST", "/apps/demo/studio/payouts/connect", strings.NewReader("password="+seed.DemoPassword), creator)
				if r.Status != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "/connect/onboarding/") {
					t.Errorf("concurrent connect: %d %s", r.Status, r.Header.Get("Location"))
				}
			}()
		}
		wg.Wait()
		ids := f.stripe.AccountIDs()
		pa, err := f.ts.store.PayoutAccountOf(ctx, f.demo.ID)
		if len(ids) != 1 || err != nil || pa == nil || pa.StripeAccountID != ids[0] {
			t.Fatalf("accounts %v, recorded %+v %v", ids, pa, err)
		}
		acct := ids[0]
		if a := f.stripe.Account(acct); a["type"] != "express" {
			t.Fatalf("account %+v", a)
		}

		// Back before finishing: Stripe says details are still due.
		r := f.ts.do(t, "GET", "/apps/demo/studio/payouts/return", nil, creator)
		if r.Status != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "notice=payouts-pending") {
			t.Fatalf("early return: %d %q", r.Status, r.Header.Get("Location"))
		}
		page = f.ts.do(t, "GET", "/apps/demo/studio/payouts", nil, creator)
		if !strings.Contains(page.Body, "Setup not finished") || !strings.Contains(page.Body, "external account") {
			t.Fatalf("payouts page while onboarding: %.800s", page.Body)
		}
		commExpect(t, "dashboard before onboarding", f.ts.do(t, "POST", "/apps/demo/studio/payouts/dashboard", strings.NewReader("password="+seed.DemoPassword), creator), 409, msgNotOnboarded)

		// The creator finishes Stripe's onboarding. The event, signed with
		// the platform's payment webhook secret instead of the Connect
		// one, is refused and changes nothing.
		link := f.connect(t)
		res, err := noRedirect.PostForm(link, url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		// The link is used now: opened again, Stripe sends the browser to
		// refresh_url, where the studio makes a fresh link.
		if res, err := noRedirect.Get(link); err != nil || res.StatusCode != http.StatusSeeOther ||
			res.Header.Get("Location") != "http://main.test/apps/demo/studio/payouts/refresh" {
			t.Fatalf("a used link: %v %+v", err, res)
		}
		if r := f.ts.do(t, "GET", "/apps/demo/studio/payouts/refresh", nil, creator); r.Status != http.StatusSeeOther ||
			!strings.HasPrefix(r.Header.Get("Location"), f.stripe.URL+"/connect/onboarding/") || r.Header.Get("Location") == link {
			t.Fatalf("refresh: %d %q", r.Status, r.Header.Get("Location"))
		}
		ev := lastEvent(t, f.stripe, "account.updated")
		commExpect(t, "signed with the payments secret", connectHook(t, f, ev.Payload, f.stripe.Sign(ev.Payload, time.Now())), 400, msgInvalidSignature)
		if pa, _ := f.ts.store.PayoutAccountOf(ctx, f.demo.ID); pa.ChargesEnabled {
			t.Fatal("a wrongly signed event enabled charges")
		}
		commExpect(t, "account.updated", connectHook(t, f, ev.Payload, ev.Header), 200, `"status":"updated"`)
		commExpect(t, "the same event again", connectHook(t, f, ev.Payload, ev.Header), 200, `"received":true`)
		pa, _ = f.ts.store.PayoutAccountOf(ctx, f.demo.ID)
		if !pa.ChargesEnabled || !pa.PayoutsEnabled || !pa.DetailsSubmitted || pa.CurrentlyDue != "" {
			t.Fatalf("after account.updated: %+v", pa)
		}
		// An older event delivered late (charges not enabled yet) is stale.
		old := f.stripe.ConnectEvent("account.updated", acct, map[string]any{"id": acct, "object": "account", "charges_enabled": false,
			"details_submitted": false, "requirements": map[string]any{"currently_due": []any{"external_account"}}}, time.Now().Add(-time.Hour))
		commExpect(t, "stale event", connectHook(t, f, old.Payload, old.Header), 200, `"status":"stale"`)
		// Another platform's account is ignored.
		other := f.stripe.ConnectEvent("account.updated", "acct_elsewhere", map[string]any{"id": "acct_elsewhere", "object": "account", "charges_enabled": true}, time.Now())
		commExpect(t, "unknown account", connectHook(t, f, other.Payload, other.Header), 200, `"status":"IGNORED"`)
		if pa, _ := f.ts.store.PayoutAccountOf(ctx, f.demo.ID); !pa.ChargesEnabled {
			t.Fatal("a stale event disabled charges")
		}

		// Cards are offered now, and the charge names the account.
		if ms := methodsOf(t, f, buyer); !hasMethod(ms, "stripe") {
			t.Fatalf("methods after onboarding: %v", ms)
		}
		a := decodePay(t, f.post(t, "/stripe-payments/create-intent", buyer, map[string]any{"orderId": o.ID}))
		pi, _ := a.Data["paymentIntentId"].(string)
		in := f.stripe.Intent(pi)
		if td, _ := in["transfer_data"].(map[string]any); td == nil || td["destination"] != acct || in["application_fee_amount"] != float64(250) {
			t.Fatalf("intent after onboarding: %+v", in)
		}
		page = f.ts.do(t, "GET", "/apps/demo/studio/payouts", nil, creator)
		if !strings.Contains(page.Body, `data-state="ACTIVE"`) || !strings.Contains(page.Body, "Stripe dashboard") {
			t.Fatalf("payouts page when active: %.800s", page.Body)
		}
		r = f.ts.do(t, "POST", "/apps/demo/studio/payouts/dashboard", strings.NewReader("password="+seed.DemoPassword), creator)
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != f.stripe.URL+"/connect/express/"+acct {
			t.Fatalf("dashboard: %d %q", r.Status, r.Header.Get("Location"))
		}
		// An admin sees the screen but cannot connect or open the dashboard.
		admin := withSession(sessionFor(t, f.ts, "admin@demo.test"), "Content-Type", "application/x-www-form-urlencoded")
		if r := f.ts.do(t, "GET", "/apps/demo/studio/payouts", nil, admin); r.Status != 200 || strings.Contains(r.Body, "Stripe dashboard</button>") {
			t.Fatalf("admin's payouts page: %d", r.Status)
		}
		commExpect(t, "admin dashboard", f.ts.do(t, "POST", "/apps/demo/studio/payouts/dashboard", strings.NewReader("password="+seed.DemoPassword), admin), 403, "creator can manage its payouts")
	})
}

// Without PAYOUTS_REQUIRED an app with no account takes cards on the
// platform's account, as before Connect: no destination, no fee at Stripe,
// and the ledger still books what the platform owes the creator.
func TestCardWithoutAccountGoesToPlatformWhenNotRequired(t *testing.T) {
	t.Parallel()
	f := newConnectFixture(t, storetest.Postgres(t), false)
	buyer := commUser(t, f.ts, "follower@demo.test")
	if ms := methodsOf(t, f, buyer); !hasMethod(ms, "stripe") {
		t.Fatalf("methods: %v", ms)
	}
	o, pi := f.paidByCard(t, "follower@demo.test", 4000)
	if in := f.stripe.Intent(pi); in["transfer_data"] != nil || in["application_fee_amount"] != nil || in["on_behalf_of"] != nil {
		t.Fatalf("a platform charge carried Connect parameters: %+v", in)
	}
	if got := f.reload(t, o.ID); got.Status != store.OrderPaid {
		t.Fatalf("order %s", got.Status)
	}
	sums, err := f.ts.store.LedgerSums(context.Background(), f.demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sums[store.TransferEarning] != 4000 || sums[store.TransferFee] != 200 {
		t.Fatalf("ledger %v", sums)
	}
}

// orderOf makes a PENDING order of item for email.
func (f *payFixture) orderOf(t *testing.T, email string, it *store.StoreItem) *store.Order {
	t.Helper()
	ctx := context.Background()
	if _, err := f.ts.store.DB().NewInsert().Model(it).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	uid := f.userID(t, email)
	cart, err := f.ts.store.AddToCart(ctx, f.shop, uid, it.ID, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := f.ts.store.CreateOrder(ctx, f.shop, uid, store.CheckoutInput{CartID: cart.ID})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (f *payFixture) payByCard(t *testing.T, as map[string]string, o *store.Order) string {
	t.Helper()
	a := decodePay(t, f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o.ID}))
	pi, _ := a.Data["paymentIntentId"].(string)
	if r := f.post(t, "/stripe-payments/confirm", as, map[string]any{"paymentIntentId": pi, "paymentMethodId": "pm_card_visa"}); r.Status != 200 {
		t.Fatalf("pay %s: %d %s", o.ID, r.Status, r.Body)
	}
	return pi
}

func wantDestination(t *testing.T, what string, in map[string]any, acct string, fee int64) {
	t.Helper()
	td, _ := in["transfer_data"].(map[string]any)
	if td == nil || td["destination"] != acct || int64(in["application_fee_amount"].(float64)) != fee || in["on_behalf_of"] != acct {
		t.Fatalf("%s: want destination and on_behalf_of %s and fee %d, got %+v", what, acct, fee, in)
	}
}

// A card order, a ticket, a donation and a membership (its first payment
// and a renewal invoice) each name the creator's account with the 5% fee;
// a partial and then a full refund reverse the transfer and give the fee
// back in proportion. The ledger's sums equal Stripe's: gross = transfers,
// fees = application fees, refunds = transfer reversals, fees back =
// application fee refunds; the studio's balance and statement say the same.
func TestDestinationChargesRefundsAndLedger(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	f := newConnectFixture(t, db, true)
	ctx := context.Background()
	acct := f.onboard(t)
	const email = "follower@demo.test"
	buyer := commUser(t, f.ts, email)
	before, err := f.ts.store.StatementOf(ctx, f.demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()

	// A card order.
	o := f.order(t, email, 5000)
	pi := f.payByCard(t, buyer, o)
	wantDestination(t, "order", f.stripe.Intent(pi), acct, 250)

	// A ticket of a demo event.
	var eventID string
	if err := db.NewSelect().Table("events").Column("id").Where("app_id = ?", f.demo.ID).Limit(1).Scan(ctx, &eventID); err != nil {
		t.Fatal(err)
	}
	ticket := f.orderOf(t, email, &store.StoreItem{ID: store.NewID(), AppID: f.demo.ID, StoreID: f.shop.ID, Name: "Meetup ticket",
		Type: store.ItemEventTicket, EventID: &eventID, Price: 1500, Currency: "USD", Settings: "{}", CreatedAt: now, UpdatedAt: now})
	tpi := f.payByCard(t, buyer, ticket)
	wantDestination(t, "ticket", f.stripe.Intent(tpi), acct, 75)

	// A donation.
	da := decodePay(t, f.ts.do(t, "POST", "/api/donations/create", body(map[string]any{"appId": "demo", "amount": 2500, "currency": "USD"}), buyer))
	donationID, _ := da.Data["id"].(string)
	pa := decodePay(t, f.ts.do(t, "POST", "/api/donations/process", body(map[string]any{"donationId": donationID, "paymentMethod": "stripe"}), buyer))
	payment, _ := pa.Data["payment"].(map[string]any)
	dpi, _ := payment["ref"].(string)
	wantDestination(t, "donation", f.stripe.Intent(dpi), acct, 125)
	f.stripe.Succeed(dpi)
	if r := stripeHook(t, f, lastEvent(t, f.stripe, "payment_intent.succeeded").Payload, lastEvent(t, f.stripe, "payment_intent.succeeded").Header); r.Status != 200 {
		t.Fatalf("donation webhook: %d %s", r.Status, r.Body)
	}
	if d, _ := f.ts.store.DonationByID(ctx, donationID); d.Status != store.DonationPaid {
		t.Fatalf("donation %s", d.Status)
	}

	// A membership: its first payment, then Stripe's subscription to the
	// same account with the fee percent, and a renewal invoice.
	plan, _ := planInCart(t, f, email)
	ppi := f.payByCard(t, buyer, plan)
	wantDestination(t, "membership", f.stripe.Intent(ppi), acct, store.FeeOn(plan.Total, 500))
	w := &jobs.StartCardRenewalWorker{Renewals: f.ts.CardRenewals()}
	if err := w.Work(ctx, &river.Job[jobs.StartCardRenewalArgs]{JobRow: &rivertype.JobRow{}, Args: jobs.StartCardRenewalArgs{OrderID: plan.ID}}); err != nil {
		t.Fatalf("start renewals: %v", err)
	}
	subs := f.stripe.SubscriptionIDs()
	if len(subs) != 1 {
		t.Fatalf("subscriptions %v", subs)
	}
	ss := f.stripe.Subscription(subs[0])
	if td, _ := ss["transfer_data"].(map[string]any); td == nil || td["destination"] != acct || ss["application_fee_percent"] != float64(5) || ss["on_behalf_of"] != acct {
		t.Fatalf("membership subscription: %+v", ss)
	}
	inv := f.stripe.RenewSubscription(subs[0])
	if r := stripeHook(t, f, inv.Payload, inv.Header); r.Status != 200 {
		t.Fatalf("invoice.paid: %d %s", r.Status, r.Body)
	}
	// The same invoice again books nothing twice.
	stripeHook(t, f, inv.Payload, inv.Header)

	// A partial refund, then the rest, of the card order.
	admin := commUser(t, f.ts, "admin@demo.test")
	if r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": pi, "amount": 2000, "reason": "Part"}); r.Status != 200 {
		t.Fatalf("partial refund: %d %s", r.Status, r.Body)
	}
	fee := feeOfCharge(t, f, pi)
	if fee.Amount != 250 || fee.Refunded != 100 || transferOf(t, f, pi).Reversed != 2000 {
		t.Fatalf("after the partial refund: fee %+v transfer %+v", fee, transferOf(t, f, pi))
	}
	// Stripe's charge.refunded for it changes nothing more.
	ref := lastEvent(t, f.stripe, "charge.refunded")
	stripeHook(t, f, ref.Payload, ref.Header)
	if r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": pi, "reason": "Rest"}); r.Status != 200 {
		t.Fatalf("full refund: %d %s", r.Status, r.Body)
	}
	if fee, tr := feeOfCharge(t, f, pi), transferOf(t, f, pi); fee.Refunded != 250 || tr.Reversed != 5000 {
		t.Fatalf("after the full refund: fee %+v transfer %+v", fee, tr)
	}
	if got := f.reload(t, o.ID); got.Status != store.OrderRefunded {
		t.Fatalf("order %s", got.Status)
	}

	// The ledger equals Stripe.
	var gross, fees, feesBack, reversed int64
	for _, tr := range f.stripe.Transfers() {
		if tr.Destination != acct {
			t.Fatalf("transfer to %s", tr.Destination)
		}
		gross += tr.Amount
		reversed += tr.Reversed
	}
	for _, fe := range f.stripe.ApplicationFees() {
		fees += fe.Amount
		feesBack += fe.Refunded
	}
	sums, err := f.ts.store.LedgerSums(ctx, f.demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Stripe's own fee, from each charge's balance transaction, is booked
	// once per payment (the order's confirm and webhook, the donation's
	// webhook), as the platform's cost: a destination charge's fee is
	// charged to the platform, so the creator's balance is untouched by it.
	if pf := f.stripe.ProcessorFees(); pf == 0 || sums[store.TransferProcessorFee] != pf {
		t.Fatalf("processor fees booked %d, Stripe kept %d", sums[store.TransferProcessorFee], pf)
	}
	if sums[store.TransferEarning] != gross || sums[store.TransferFee] != fees || sums[store.TransferFeeRefund] != feesBack || sums[store.TransferRefund] < reversed {
		t.Fatalf("ledger %v; Stripe: transfers %d, fees %d, fees back %d, reversed %d", sums, gross, fees, feesBack, reversed)
	}
	wantGross := int64(5000 + 1500 + 2500 + 2*plan.Total)
	if gross != wantGross {
		t.Fatalf("transfers %d, want %d", gross, wantGross)
	}
	after, err := f.ts.store.StatementOf(ctx, f.demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	net := gross - fees + feesBack - reversed
	if after.Balance-before.Balance != net || after.Totals.Net-before.Totals.Net != net {
		t.Fatalf("balance moved %d, statement net %d, want %d", after.Balance-before.Balance, after.Totals.Net-before.Totals.Net, net)
	}
	// The studio shows it, and the CSV's total line says the same.
	creator := f.creatorForm(t)
	page := f.ts.do(t, "GET", "/apps/demo/studio/payouts", nil, creator)
	if page.Status != 200 || !strings.Contains(page.Body, "Statement by month") || !strings.Contains(page.Body, now.UTC().Format("2006-01")) {
		t.Fatalf("payouts page: %d %.500s", page.Status, page.Body)
	}
	csvr := f.ts.do(t, "GET", "/apps/demo/studio/payouts/statement.csv", nil, creator)
	if csvr.Status != 200 || !strings.HasPrefix(csvr.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(csvr.Body, "month,payments,gross,platform_fees,processor_fees,refunds,fees_refunded,net,currency") ||
		!strings.Contains(csvr.Body, "total,") || !strings.Contains(csvr.Body, ","+cents(after.Totals.Net)+",USD") {
		t.Fatalf("statement CSV: %d %s", csvr.Status, csvr.Body)
	}
}

func feeOfCharge(t *testing.T, f *payFixture, pi string) paymentstest.ApplicationFee {
	t.Helper()
	id, _ := f.stripe.Intent(pi)["application_fee"].(string)
	for _, fe := range f.stripe.ApplicationFees() {
		if fe.ID == id {
			return fe
		}
	}
	t.Fatalf("no application fee for %s", pi)
	return paymentstest.ApplicationFee{}
}

func transferOf(t *testing.T, f *payFixture, pi string) paymentstest.Transfer {
	t.Helper()
	id, _ := f.stripe.Intent(pi)["transfer"].(string)
	for _, tr := range f.stripe.Transfers() {
		if tr.ID == id {
			return tr
		}
	}
	t.Fatalf("no transfer for %s", pi)
	return paymentstest.Transfer{}
}

// Forty concurrent partial refunds of one destination charge: each
// reverses its share at Stripe and in the ledger, and at the end what the
// ledger gave back (refunds, fees) is exactly what Stripe did.
func TestConcurrentRefundsOfADestinationCharge(t *testing.T) {
	t.Parallel()
	f := newConnectFixture(t, storetest.Postgres(t), true)
	ctx := context.Background()
	f.onboard(t)
	buyer := commUser(t, f.ts, "follower@demo.test")
	o := f.order(t, "follower@demo.test", 2050)
	pi := f.payByCard(t, buyer, o)
	admin := commUser(t, f.ts, "admin@demo.test")
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": pi, "amount": 100, "reason": "Part"})
			mu.Lock()
			if r.Status == 200 {
				ok++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	got := f.reload(t, o.ID)
	fee, tr := feeOfCharge(t, f, pi), transferOf(t, f, pi)
	if ok != 20 || got.RefundedAmount != 2000 || tr.Reversed != 2000 {
		t.Fatalf("%d refunds, recorded %d, reversed %d", ok, got.RefundedAmount, tr.Reversed)
	}
	sums, err := f.ts.store.LedgerSums(ctx, f.demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sums[store.TransferRefund] != 2000 || sums[store.TransferFeeRefund] != fee.Refunded || sums[store.TransferFee] != fee.Amount {
		t.Fatalf("ledger %v, fee %+v", sums, fee)
	}
	if r := f.post(t, "/stripe-payments/refund", admin, map[string]any{"paymentIntentId": pi, "reason": "Rest"}); r.Status != 200 {
		t.Fatalf("rest: %d %s", r.Status, r.Body)
	}
	fee = feeOfCharge(t, f, pi)
	sums, _ = f.ts.store.LedgerSums(ctx, f.demo.ID)
	if fee.Refunded != fee.Amount || sums[store.TransferFeeRefund] != fee.Amount || sums[store.TransferRefund] != 2050 {
		t.Fatalf("after the rest: ledger %v, fee %+v", sums, fee)
	}
}

// Wallet payments credit the creator the same way: the gross from the
// member, the fee to the platform; a refund gives the fee back first, then
// the member's money.
func TestWalletPaymentsInTheCreatorsLedger(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newConnectFixture(t, db, true)
		ctx := context.Background()
		const email = "follower@demo.test"
		uid := f.userID(t, email)
		if _, _, err := f.ts.store.CreditWallet(ctx, f.demo.ID, uid, 10000, "test-credit-"+store.NewID(), "test"); err != nil {
			t.Fatal(err)
		}
		before, _ := f.ts.store.StatementOf(ctx, f.demo.ID)
		sums0, _ := f.ts.store.LedgerSums(ctx, f.demo.ID)
		o := f.order(t, email, 1000)
		if _, err := f.ts.store.PayOrderFromWallet(ctx, f.demo.ID, uid, o.ID); err != nil {
			t.Fatal(err)
		}
		mid, _ := f.ts.store.StatementOf(ctx, f.demo.ID)
		sums1, _ := f.ts.store.LedgerSums(ctx, f.demo.ID)
		if mid.Balance-before.Balance != 950 || sums1[store.TransferFee]-sums0[store.TransferFee] != 50 {
			t.Fatalf("after a wallet payment: balance +%d, fees %v", mid.Balance-before.Balance, sums1)
		}
		if _, err := f.ts.store.RefundOrderAmount(ctx, f.demo.ID, o.ID, 400, "part"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ts.store.RefundOrderAmount(ctx, f.demo.ID, o.ID, 0, "rest"); err != nil {
			t.Fatal(err)
		}
		after, _ := f.ts.store.StatementOf(ctx, f.demo.ID)
		sums2, _ := f.ts.store.LedgerSums(ctx, f.demo.ID)
		if after.Balance != before.Balance || sums2[store.TransferFeeRefund]-sums0[store.TransferFeeRefund] != 50 {
			t.Fatalf("after the refunds: balance %d (was %d), ledger %v", after.Balance, before.Balance, sums2)
		}
		if bal, _ := f.ts.store.WalletBalance(ctx, f.demo.ID, uid); bal < 10000 {
			t.Fatalf("member's wallet %d after a full refund", bal)
		}
	})
}

func TestParsePercentBP(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"0": 0, "5": 500, "2.5": 250, "12.25": 1225, "100": 10000, "7%": 700} {
		if got, err := ParsePercentBP(in); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "101", "1.234", "abc", "+5"} {
		if _, err := ParsePercentBP(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The processor's fee is in the ledger as its own entry (issue 24 item 3):
// a card payment on the platform's own account (no Connect account, payouts
// not required) and a PayPal payment each book what the processor kept, read
// from the provider (Stripe's balance transaction of the charge, PayPal's
// seller_receivable_breakdown.paypal_fee), once however often the payment is
// reported; the platform bears it (the creator's balance is earnings less
// the platform fee, so a full refund never overdraws it), the statement and
// its CSV show it, and the ledger's sums equal the providers' including the
// fees.
func TestProcessorFeesInTheCreatorsLedger(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, demoDB(t), func(cfg *Config) { cfg.PlatformFeeBP = 500 })
	ctx := context.Background()
	const email = "follower@demo.test"
	buyer := commUser(t, f.ts, email)
	before, err := f.ts.store.StatementOf(ctx, f.demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	o := f.order(t, email, 5000)
	pi := f.payByCard(t, buyer, o)
	ev := lastEvent(t, f.stripe, "payment_intent.succeeded")
	for range 3 {
		if r := stripeHook(t, f, ev.Payload, ev.Header); r.Status != 200 {
			t.Fatalf("webhook: %d %s", r.Status, r.Body)
		}
	}
	if got, want := f.stripe.ProcessorFee(pi), paymentstest.StripeFeeOn(5000); got != want || want != 175 {
		t.Fatalf("Stripe kept %d, want %d", got, want)
	}
	_, _ = payByPayPal(t, f, 2000)

	sums, err := f.ts.store.LedgerSums(ctx, f.demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	provider := f.stripe.ProcessorFees() + f.paypal.ProcessorFees()
	if want := int64(175 + 119); provider != want || sums[store.TransferProcessorFee] != provider {
		t.Fatalf("ledger processor fees %d, providers %d (want %d)", sums[store.TransferProcessorFee], provider, want)
	}
	if sums[store.TransferEarning] != 7000 || sums[store.TransferFee] != 350 {
		t.Fatalf("ledger %v", sums)
	}
	after, err := f.ts.store.StatementOf(ctx, f.demo.ID)
	if err != nil {
		t.Fatal(err)
	}
	fees := after.Totals.ProcessorFees - before.Totals.ProcessorFees
	if fees != provider || after.Balance-before.Balance != 7000-350 || after.Totals.Net-before.Totals.Net != 7000-350 {
		t.Fatalf("statement: processor fees %d, balance moved %d", fees, after.Balance-before.Balance)
	}
	creator := f.creatorForm(t)
	page := f.ts.do(t, "GET", "/apps/demo/studio/payouts", nil, creator)
	if page.Status != 200 || !strings.Contains(page.Body, "Processor fees") {
		t.Fatalf("payouts page: %d", page.Status)
	}
	csvr := f.ts.do(t, "GET", "/apps/demo/studio/payouts/statement.csv", nil, creator)
	if !strings.Contains(csvr.Body, "processor_fees") || !strings.Contains(csvr.Body, ","+cents(after.Totals.ProcessorFees)+",") {
		t.Fatalf("statement CSV: %s", csvr.Body)
	}
}
