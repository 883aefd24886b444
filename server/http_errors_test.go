package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"marquee/server/media"
	"marquee/server/payments"
	"marquee/store"
	"marquee/store/storetest"
)

// TestDomainErrorStatuses is the table of every domain error and the one
// status it answers. Each call's wording (orderError, paymentError, ...) and
// the error handler itself (a handler that returns the error as it is) must
// give that status; only the message may differ.
func TestDomainErrorStatuses(t *testing.T) {
	t.Parallel()
	table := []struct {
		err    error
		status int
	}{
		{store.ErrNotFound, http.StatusNotFound},
		{store.ErrForbidden, http.StatusForbidden},
		{store.ErrTicketRequired, http.StatusForbidden},
		{store.ErrNoSubscription, http.StatusNotFound},
		{store.ErrEmailTaken, http.StatusConflict},
		{store.ErrUsernameTaken, http.StatusConflict},
		{store.ErrDomainTaken, http.StatusConflict},
		// Accounts: a used or expired mailed link, an address not yet
		// confirmed, and deleting an account that owns an app.
		{store.ErrTokenInvalid, http.StatusBadRequest},
		{store.ErrEmailNotVerified, http.StatusForbidden},
		{store.ErrOwnsApp, http.StatusConflict},
		{store.ErrIllegalTransition, http.StatusConflict},
		{store.ErrDonationClosed, http.StatusConflict},
		{store.ErrTopupClosed, http.StatusConflict},
		// paymentError answered this one 400 and orderError 409.
		{store.ErrAmountMismatch, http.StatusConflict},
		{store.ErrReferenceReused, http.StatusConflict},
		{store.ErrPlanOffSale, http.StatusConflict},
		{store.ErrPaidMember, http.StatusConflict},
		{store.ErrOfferUnknown, http.StatusBadRequest},
		{store.ErrOfferNotForTier, http.StatusBadRequest},
		{store.ErrOfferExpired, http.StatusConflict},
		{store.ErrOfferUsedUp, http.StatusConflict},
		{store.ErrOfferRedeemed, http.StatusConflict},
		{store.ErrTrialTaken, http.StatusConflict},
		{store.ErrTrialNeedsCard, http.StatusConflict},
		{store.ErrInsufficientFunds, http.StatusPaymentRequired},
		{store.ErrBadCursor, http.StatusBadRequest},
		{&store.ErrInvalid{Msg: "Attachment not found"}, http.StatusBadRequest},
		{&store.ErrTierChange{Msg: "Your membership is a gift: join a tier to pay for one of your own"}, http.StatusConflict},
		{payments.ErrDeclined, http.StatusPaymentRequired},
		{&payments.DeclinedError{Reason: "Your card was declined."}, http.StatusPaymentRequired},
		{payments.ErrNotThisOrder, http.StatusConflict},
		{payments.ErrDisabled, http.StatusBadRequest},
		{payments.ErrNotSupported, http.StatusBadRequest},
		{payments.ErrInvalidWebhook, http.StatusBadRequest},
		{payments.ErrNoApprovalURL, http.StatusBadGateway},
		{payments.ErrProvider, http.StatusBadGateway},
		{media.ErrIncomplete, http.StatusBadRequest},
		{media.ErrSizeMismatch, http.StatusBadRequest},
		{media.ErrSize, http.StatusBadRequest},
		{media.ErrTypeMismatch, http.StatusBadRequest},
		{media.ErrRead, http.StatusBadRequest},
		{media.ErrBadSignature, http.StatusForbidden},
		{media.ErrNotFound, http.StatusNotFound},
	}
	// A rule added to the mapping without a row here fails: the table is
	// the list a reviewer reads.
	listed := map[error]bool{}
	for _, row := range table {
		listed[row.err] = true
	}
	for _, r := range domainRules() {
		if !listed[r.err] {
			t.Errorf("domainRules maps %v but this table has no row for it", r.err)
		}
	}

	calls := map[string]func(error) error{
		"answer":               func(err error) error { return answer(err, nil) },
		"orderError":           orderError,
		"paymentError":         func(err error) error { return paymentError(err, "Failed to create payment intent", msgNotAwaiting) },
		"moneyError":           moneyError,
		"donationPaymentError": donationPaymentError,
		"cartError":            cartError,
		"joinError":            joinError,
		"wrapLoad":             func(err error) error { return wrapLoad(err, "Item not found") },
	}
	for _, row := range table {
		// Stores wrap their errors with context; the mapping must see through it.
		wrapped := fmt.Errorf("load order 42: %w", row.err)
		for name, call := range calls {
			var e *Error
			if !errors.As(call(wrapped), &e) {
				t.Errorf("%s(%v): not mapped", name, row.err)
				continue
			}
			if e.Status != row.status || e.Message == "" {
				t.Errorf("%s(%v): %d %q, want %d", name, row.err, e.Status, e.Message, row.status)
			}
			if !errors.Is(e, row.err) {
				t.Errorf("%s(%v): the cause is lost for the log", name, row.err)
			}
		}
		// A handler that returns the error unmapped gets the same answer.
		if status, msg := classify(wrapped); status != row.status || strings.Contains(msg, "load order") {
			t.Errorf("classify(%v): %d %q, want %d and no internal text", row.err, status, msg, row.status)
		}
	}
	// What the mapping does not know stays a 500 with a safe message.
	if status, msg := classify(errors.New("pq: relation does not exist")); status != 500 || strings.Contains(msg, "pq") {
		t.Errorf("unknown error: %d %q", status, msg)
	}
	// A call's words change the message, never the status.
	var e *Error
	if !errors.As(answer(store.ErrNotFound, wording{store.ErrNotFound: "Order not found"}), &e) || e.Status != 404 || e.Message != "Order not found" {
		t.Errorf("worded not-found: %+v", e)
	}
	// A taken e-mail is about the email field.
	if !errors.As(answer(store.ErrEmailTaken, nil), &e) || e.Fields["email"] == "" {
		t.Errorf("email taken carries no field: %+v", e)
	}
}

// TestSameErrorSameStatus: calls that hit the same domain error answer the
// same status, whichever handler (and former mapper) they go through.
func TestSameErrorSameStatus(t *testing.T) {
	t.Parallel()
	f := newPayFixture(t, storetest.Postgres(t), nil)
	as := commUser(t, f.ts, "follower@demo.test")
	base := "/api/store/" + f.shop.ID

	// store.ErrNotFound: an order that does not exist.
	missing := map[string]response{
		"GET order":            f.ts.do(t, "GET", base+"/orders/nope", nil, as),
		"cancel order":         f.post(t, "/orders/nope/cancel", as, map[string]any{}),
		"wallet pay":           f.post(t, "/musepay/process", as, map[string]any{"orderId": "nope"}),
		"stripe create-intent": f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": "nope"}),
		"paypal create-order":  f.post(t, "/paypal/create-order", as, map[string]any{"orderId": "nope"}),
	}
	sameStatus(t, "unknown order", missing, http.StatusNotFound)

	// store.ErrIllegalTransition: an order that was cancelled.
	o := f.order(t, "follower@demo.test", 700)
	if r := f.post(t, "/orders/"+o.ID+"/cancel", as, map[string]any{}); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	cancelled := map[string]response{
		"cancel again":         f.post(t, "/orders/"+o.ID+"/cancel", as, map[string]any{}),
		"wallet pay":           f.post(t, "/musepay/process", as, map[string]any{"orderId": o.ID}),
		"stripe create-intent": f.post(t, "/stripe-payments/create-intent", as, map[string]any{"orderId": o.ID}),
		"paypal create-order":  f.post(t, "/paypal/create-order", as, map[string]any{"orderId": o.ID}),
	}
	sameStatus(t, "cancelled order", cancelled, http.StatusConflict)
}

func sameStatus(t *testing.T, what string, answers map[string]response, want int) {
	t.Helper()
	for call, r := range answers {
		var env struct {
			Success bool   `json:"success"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal([]byte(r.Body), &env); err != nil || env.Success || env.Message == "" {
			t.Errorf("%s, %s: not an error envelope: %s", what, call, r.Body)
		}
		if r.Status != want {
			t.Errorf("%s, %s: %d %s, want %d like every call", what, call, r.Status, r.Body, want)
		}
	}
}

// TestFieldErrors: a refused field is reported by name in the JSON envelope
// and shown beside its input when the form is posted without JavaScript.
func TestFieldErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoDB(t))
	h := commUser(t, ts, "creator@demo.test")
	demo, err := ts.store.AppByIDOrName(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	r := ts.do(t, "POST", "/api/events/apps/"+demo.ID+"/events", body(map[string]any{
		"name": "Launch", "startDate": "2099-01-02T10:00:00Z", "endDate": "2099-01-01T10:00:00Z"}), h)
	var env struct {
		Message string            `json:"message"`
		Fields  map[string]string `json:"fields"`
	}
	_ = json.Unmarshal([]byte(r.Body), &env)
	if r.Status != 400 || env.Fields["endDate"] != "End date/time must be after start date/time" || env.Message != env.Fields["endDate"] {
		t.Fatalf("JSON field error: %d %s", r.Status, r.Body)
	}

	form := "name=&startDate=2099-01-01&startTime=10:00&endDate=2099-01-01&endTime=12:00"
	page := ts.do(t, "POST", "/apps/demo/create-event", strings.NewReader(form),
		map[string]string{"Cookie": h["Cookie"], "Content-Type": "application/x-www-form-urlencoded"})
	if page.Status != 400 || !strings.Contains(page.Body, `<span class="field-error" id="error-name">Please enter an event name</span>`) {
		t.Fatalf("form field error: %d %.2000s", page.Status, page.Body)
	}

	// Sign-up: a taken e-mail is a 409 on its field, in the page and in JSON.
	signup := "email=creator%40demo.test&username=brandnew&password=correct-horse-battery"
	res := ts.do(t, "POST", "/authenticate/signup", strings.NewReader(signup),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if res.Status != 409 || !strings.Contains(res.Body, "An account with this email already exists") {
		t.Fatalf("sign-up with a taken email: %d %.500s", res.Status, res.Body)
	}
}
