package paypal

import (
	"context"
	"testing"

	"marquee/server/payments/paymentstest"
)

func TestMoney(t *testing.T) {
	for cents, s := range map[int64]string{0: "0.00", 5: "0.05", 1999: "19.99", 100000: "1000.00"} {
		if got := Value(cents); got != s {
			t.Errorf("Value(%d) = %s, want %s", cents, got, s)
		}
		if got, err := Cents(s); err != nil || got != cents {
			t.Errorf("Cents(%s) = %d %v", s, got, err)
		}
	}
	for _, s := range []string{"12.5", "12"} {
		if got, _ := Cents(s); got != map[string]int64{"12.5": 1250, "12": 1200}[s] {
			t.Errorf("Cents(%s) = %d", s, got)
		}
	}
	if _, err := Cents("1.234"); err == nil {
		t.Error("three decimals accepted")
	}
}

func TestClientAgainstFake(t *testing.T) {
	fp := paymentstest.StartPayPal(t, "id", "secret", "WH-1")
	c := NewClient(Options{ClientID: "id", ClientSecret: "secret", APIBase: fp.URL, WebhookID: "WH-1"})
	ctx := context.Background()
	o, err := c.CreateOrder(ctx, CreateOrder{OrderID: "ord_1", Number: "ORD-1", Amount: 1234, Currency: "usd",
		ReturnURL: "http://shop.test/ok", CancelURL: "http://shop.test/cancel", RequestID: "req-1"})
	if err != nil || o.ApprovalURL() == "" || o.OrderRef() != "ord_1" {
		t.Fatalf("create: %+v %v", o, err)
	}
	again, err := c.CreateOrder(ctx, CreateOrder{OrderID: "ord_1", Amount: 1234, Currency: "usd",
		ReturnURL: "http://shop.test/ok", CancelURL: "http://shop.test/cancel", RequestID: "req-1"})
	if err != nil || again.ID != o.ID || fp.OrderCount() != 1 {
		t.Fatalf("same request id made another order: %v %v", again, err)
	}
	fp.Approve(o.ID)
	cap1, err := c.CaptureOrder(ctx, o.ID, "cap-1")
	if err != nil || cap1.Status != "COMPLETED" || len(cap1.Captures()) != 1 {
		t.Fatalf("capture: %+v %v", cap1, err)
	}
	// Captured again with another request id: PayPal says
	// ORDER_ALREADY_CAPTURED, which the client answers as the order.
	cap2, err := c.CaptureOrder(ctx, o.ID, "cap-2")
	if err != nil || cap2.Status != "COMPLETED" || fp.CaptureCount() != 1 {
		t.Fatalf("capture twice: %+v %v", cap2, err)
	}
	r, err := c.RefundCapture(ctx, cap1.Captures()[0].ID, 234, "USD", "sorry", "ref-1")
	if err != nil || r.Amount.Value != "2.34" {
		t.Fatalf("refund: %+v %v", r, err)
	}
	if fp.TokenCalls() != 1 {
		t.Fatalf("%d token calls, want 1 (cached)", fp.TokenCalls())
	}
	ev := fp.Events()[0]
	if err := c.VerifyWebhook(ctx, ev.Header, ev.Body); err != nil {
		t.Fatalf("verify good event: %v", err)
	}
	if err := c.VerifyWebhook(ctx, ev.Header, append([]byte(nil), append(ev.Body[:len(ev.Body)-1], []byte(`,"x":1}`)...)...)); err == nil {
		t.Fatal("tampered event verified")
	}
	bad := NewClient(Options{ClientID: "id", ClientSecret: "wrong", APIBase: fp.URL, WebhookID: "WH-1"})
	if _, err := bad.CreateOrder(ctx, CreateOrder{OrderID: "x", Amount: 1, Currency: "USD"}); err == nil {
		t.Fatal("wrong secret made an order")
	}
}
