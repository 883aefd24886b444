package server

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// joinedByPayPal joins the fixture's fan by PayPal, approves on PayPal's
// page and comes back: the membership's order is paid by the
// subscription's first payment (a sale). It answers the order and the
// subscription's id.
func (f *ppSubFixture) joinedByPayPal(t *testing.T) (string, string) {
	t.Helper()
	orderID, ref, approval := f.join(t, nil)
	back := f.agree(t, approval)
	if r := f.ts.do(t, "GET", strings.TrimPrefix(back, "http://main.test"), nil, f.page); r.Status != 200 {
		t.Fatalf("return from PayPal: %d", r.Status)
	}
	if o := f.reload(t, orderID); o.Status != store.OrderPaid || o.PaymentRef != ref {
		t.Fatalf("joined: %s %s", o.Status, o.PaymentRef)
	}
	return orderID, ref
}

// Refunding an order paid by a PayPal subscription (issue 40, item 3): its
// payment is a sale, not an Orders v2 capture, so the refund finds the
// sale among the subscription's transactions and refunds it through
// Payments v1's sale refund. Fifty refunds at once (the studio's refund
// call and its order page's form) refund the order exactly once: one
// refund at PayPal, the order REFUNDED with its total, the membership
// ended, and the subscription cancelled at PayPal so it bills no more.
func TestRefundPayPalSubscriptionPayment(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		f := newPPSubFixture(t, db)
		orderID, ref := f.joinedByPayPal(t)
		sales := f.paypal.SubscriptionSales(ref)
		if len(sales) != 1 {
			t.Fatalf("sales: %+v", sales)
		}
		// A later cycle's payment is a renewal, not the order's: the
		// refund must still pick the first.
		if f.paypal.RenewSubscription(ref) == nil {
			t.Fatal("no renewal")
		}
		admin := commUser(t, f.ts, "admin@demo.test")
		adminPage := form(withSession(sessionFor(t, f.ts, "creator@demo.test")))
		var wg sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		for i := range 50 {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				var status int
				if i%5 == 0 {
					r := f.ts.do(t, "POST", "/apps/demo/orders/"+orderID+"/refund", strings.NewReader("reason=Asked+for+it"), adminPage)
					status = r.Status
					if r.Status == http.StatusSeeOther && strings.Contains(r.Header.Get("Location"), "refunded+in+full") {
						status = 200
					}
				} else {
					status = f.post(t, "/orders/"+orderID+"/refund", admin, map[string]any{"reason": "Asked for it"}).Status
				}
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		if statuses[200] != 1 || statuses[502] != 0 || statuses[500] != 0 {
			t.Fatalf("refund statuses: %v", statuses)
		}
		o := f.reload(t, orderID)
		if o.Status != store.OrderRefunded || o.RefundedAmount != 800 || o.RefundReason != "Asked for it" {
			t.Fatalf("order after the refunds: %s %d %q", o.Status, o.RefundedAmount, o.RefundReason)
		}
		if got := f.paypal.SaleRefunds(sales[0].ID); len(got) != 1 || got[0] != 800 {
			t.Fatalf("refunds of the first sale at PayPal: %v", got)
		}
		if later := f.paypal.SubscriptionSales(ref)[1]; len(f.paypal.SaleRefunds(later.ID)) != 0 {
			t.Fatalf("the renewal's sale was refunded")
		}
		if st := f.paypal.SubscriptionStatus(ref); st != "CANCELLED" {
			t.Fatalf("PayPal subscription after the refund: %s", st)
		}
		if s := f.sub(t); s.Status != store.SubExpired || f.role(t) != store.RoleFollower {
			t.Fatalf("membership after the refund: %s, role %s", s.Status, f.role(t))
		}
		var refunds int
		if err := db.NewSelect().Table("payment_events").ColumnExpr("COUNT(*)").
			Where("order_id = ? AND type = 'refund' AND outcome = ?", orderID, store.OutcomeRefunded).Scan(t.Context(), &refunds); err != nil || refunds != 1 {
			t.Fatalf("refunds recorded: %d %v", refunds, err)
		}
		// Again: nothing is left to refund, and PayPal is not asked.
		if r := f.post(t, "/orders/"+orderID+"/refund", admin, map[string]any{"reason": "Again"}); r.Status == 200 || r.Status >= 500 {
			t.Fatalf("second refund: %d %s", r.Status, r.Body)
		}
		if got := f.paypal.SaleRefunds(sales[0].ID); len(got) != 1 {
			t.Fatalf("refunds at PayPal after a second try: %v", got)
		}
	})
}
