package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/store"
)

// Wallet top-ups (issue 24): "Add funds" by card or PayPal. A top-up is a
// payment like an order: the amount is one the operator allows
// (WALLET_TOPUP_AMOUNTS), picked on the server from the member's choice;
// the wallet is credited only when the provider says the money arrived
// (the server's own read of the payment, or a signed webhook), once.

// defaultTopupAmounts: $10, $25, $50 and $100.
var defaultTopupAmounts = []int64{1000, 2500, 5000, 10000}

const (
	msgTopupAmount   = "Choose one of the amounts offered"
	msgTopupNotFound = "Top-up not found"
	msgTopupClosed   = "This top-up is not awaiting payment"
	msgTopupFailed   = "Failed to add funds"
	msgTopupMethod   = "Adding funds by this payment method is not available"
)

// TopupOptions is what an "Add funds" form offers: the amounts the operator
// allows and the methods that can take money in (card, PayPal).
type TopupOptions struct {
	Amounts []int64  `json:"amounts"`
	Methods []string `json:"methods"`
}

func (s *Server) topupOptions() TopupOptions {
	o := TopupOptions{Amounts: s.cfg.WalletTopupAmounts, Methods: []string{}}
	if len(o.Amounts) == 0 {
		o.Amounts = defaultTopupAmounts
	}
	for _, m := range s.payments.Names() {
		if _, err := s.payments.TopupPayerFor(m); err == nil {
			o.Methods = append(o.Methods, m)
		}
	}
	return o
}

// topupError answers a top-up call's errors in its words.
// msgTopupsPending: the member has the most top-ups waiting for payment.
const msgTopupsPending = "You already have %d top-ups waiting for payment. Finish or wait for one of them before starting another."

func topupError(err error) error {
	return answer(err, wording{
		store.ErrNotFound:        msgTopupNotFound,
		store.ErrTopupClosed:     msgTopupClosed,
		payments.ErrProvider:     msgTopupFailed,
		payments.ErrDisabled:     msgTopupMethod,
		payments.ErrNotSupported: msgTopupMethod,
	})
}

type topupRequest struct {
	// Amount in minor units: it must be one of the allowed amounts, and
	// only picks which; the stored top-up carries the server's number.
	Amount int64  `json:"amount"`
	Method string `json:"method"`
	// redirect: the caller can only follow a redirect (the plain form),
	// so a card is taken on Stripe's hosted Checkout page.
	redirect bool
}

// startTopup is the one way a top-up starts: the JSON call and the form
// share it.
func (s *Server) startTopup(c echo.Context, sc *Scope, req topupRequest) (*store.WalletTopup, *payments.Started, error) {
	opts := s.topupOptions()
	i := slices.Index(opts.Amounts, req.Amount)
	if i < 0 {
		return nil, nil, badRequest(msgTopupAmount)
	}
	method := strings.TrimSpace(req.Method)
	if !slices.Contains(opts.Methods, method) {
		return nil, nil, badRequest(msgTopupMethod)
	}
	tp, err := s.payments.TopupPayerFor(method)
	if err != nil {
		return nil, nil, topupError(err)
	}
	ctx := c.Request().Context()
	t, err := s.store.CreateTopupLimited(ctx, sc.App.ID, sc.User.ID, opts.Amounts[i], method, s.limits.PendingTopups)
	if errors.Is(err, store.ErrTooManyPendingTopups) {
		c.Response().Header().Set("Retry-After", "60")
		return nil, nil, errorf(http.StatusTooManyRequests, fmt.Sprintf(msgTopupsPending, s.limits.PendingTopups))
	}
	if err != nil {
		return nil, nil, err
	}
	tr := payments.TopupRequest{Topup: t, Payer: payer(sc),
		ReturnURL: s.appURL(sc, "/wallet/topup/return", url.Values{"topupId": {t.ID}}),
		CancelURL: s.appURL(sc, "/transactions", url.Values{"error": {"Adding funds was cancelled"}})}
	start := tp.StartTopup
	if r, ok := tp.(payments.TopupRedirecter); ok && req.redirect {
		// The plain form: the card is taken on the provider's own page
		// (Stripe Checkout), which needs no JavaScript of ours.
		start = r.StartTopupRedirect
	}
	started, err := start(ctx, tr)
	if err != nil {
		return nil, nil, topupError(err)
	}
	return t, started, nil
}

// confirmTopup asks the top-up's provider whether the money arrived.
func (s *Server) confirmTopup(ctx context.Context, sc *Scope, id string) (*store.WalletTopup, error) {
	t, err := s.store.TopupOf(ctx, sc.App.ID, sc.User.ID, id)
	if err != nil {
		return nil, topupError(err)
	}
	if t.Status == store.TopupPaid {
		return t, nil
	}
	tp, err := s.payments.TopupPayerFor(t.PaymentMethod)
	if err != nil {
		return nil, topupError(err)
	}
	out, err := tp.ConfirmTopup(ctx, payments.TopupRequest{Topup: t, Payer: payer(sc)})
	if err != nil {
		return nil, topupError(err)
	}
	return out, nil
}

// POST /api/store/:storeId/wallet/topups {amount, method}: starts adding
// funds. Answers the card's client secret (for the Payment Element) or
// PayPal's approval URL; the wallet is credited once the provider says so.
func (s *Server) apiTopupCreate(c echo.Context) error {
	sc, err := s.paymentScope(c)
	if err != nil {
		return err
	}
	var req topupRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	t, started, err := s.startTopup(c, sc, req)
	if err != nil {
		return err
	}
	return respondMessage(c, http.StatusCreated, map[string]any{
		"topupId": t.ID, "amount": t.Amount, "currency": t.Currency, "method": t.PaymentMethod, "status": t.Status,
		"paymentRef": started.Ref, "clientSecret": started.ClientSecret, "approvalUrl": started.ApprovalURL,
	}, "Top-up started")
}

// POST /api/store/:storeId/wallet/topups/:topupId/confirm: asks the
// provider (never the browser) whether the money arrived; the first answer
// that says so credits the wallet.
func (s *Server) apiTopupConfirm(c echo.Context) error {
	sc, err := s.paymentScope(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	t, err := s.confirmTopup(ctx, sc, c.Param("topupId"))
	if err != nil {
		return err
	}
	bal, err := s.store.WalletBalance(ctx, sc.App.ID, sc.User.ID)
	if err != nil {
		return err
	}
	msg := "Funds added"
	if t.Status != store.TopupPaid {
		msg = "Payment is not complete yet"
	}
	return respondMessage(c, http.StatusOK, map[string]any{
		"topupId": t.ID, "amount": t.Amount, "currency": t.Currency, "status": t.Status, "balance": bal,
	}, msg)
}

// POST /apps/:app/wallet/topup (amount in dollars or cents, method): the
// "Add funds" form without JavaScript. PayPal sends the member to approve,
// a card to Stripe's hosted Checkout page; both come back to the return
// page, which reads the payment (the webhook credits it too, once).
func (s *Server) formTopup(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	base := appBasePath(c.Request(), sc.App.Name)
	back := base + "/transactions"
	if r := c.FormValue("return"); r == "checkout" || r == "donate" || r == "membership" {
		back += "?return=" + r
	}
	amount, _ := strconv.ParseInt(strings.TrimSpace(c.FormValue("amount")), 10, 64)
	t, started, err := s.startTopup(c, sc, topupRequest{Amount: amount, Method: c.FormValue("method"), redirect: true})
	if err != nil {
		return formError(c, err, back)
	}
	if started.ApprovalURL != "" {
		return c.Redirect(http.StatusSeeOther, started.ApprovalURL)
	}
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	return c.Redirect(http.StatusSeeOther, back+sep+"topupId="+url.QueryEscape(t.ID))
}

// GET /apps/:app/wallet/topup/return?topupId=: where PayPal (and a card
// that needed a redirect) sends the member back. The server captures (or
// re-reads) the payment and shows the wallet.
func (s *Server) pageTopupReturn(c echo.Context) error {
	sc, err := s.formScope(c)
	if sc == nil {
		return err
	}
	back := appBasePath(c.Request(), sc.App.Name) + "/transactions"
	t, err := s.confirmTopup(c.Request().Context(), sc, c.QueryParam("topupId"))
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 {
			return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape(e.Message))
		}
		s.logger.Error("top-up confirm on return failed", "topup", c.QueryParam("topupId"), "err", err)
		return c.Redirect(http.StatusSeeOther, back+"?error="+url.QueryEscape(msgTopupFailed))
	}
	if t.Status != store.TopupPaid {
		return c.Redirect(http.StatusSeeOther, back+"?notice="+url.QueryEscape("Your payment is being processed. The funds appear here once it completes."))
	}
	return c.Redirect(http.StatusSeeOther, back+"?added="+strconv.FormatInt(t.Amount, 10))
}

// TopupPage is the wallet page's "Add funds" part: the form, what the last
// attempt came to, and a started card top-up whose card form is due.
type TopupPage struct {
	TopupOptions
	// PublishableKey is Stripe's, for the card form (empty without cards).
	PublishableKey string `json:"publishableKey"`
	// Return is where the member came from ("checkout", "donate",
	// "membership", ""), to
	// offer the way back once funds are added.
	Return string `json:"return"`
	Added  int64  `json:"added"`
	Notice string `json:"notice,omitempty"`
	Error  string `json:"error,omitempty"`
	// Card is a PENDING card top-up of the viewer's (?topupId=): the
	// Payment Element's client secret.
	Card *TopupCard `json:"card"`
}

// TopupCard is a started card top-up waiting for the card.
type TopupCard struct {
	TopupID      string `json:"topupId"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency"`
	ClientSecret string `json:"clientSecret"`
}

func (s *Server) topupPage(c echo.Context, sc *Scope) TopupPage {
	p := TopupPage{TopupOptions: s.topupOptions(), Error: notice(c, "error"), Notice: notice(c, "notice")}
	if s.payments.Enabled(payments.Stripe) {
		p.PublishableKey = s.cfg.Stripe.PublishableKey
	}
	if r := c.QueryParam("return"); r == "checkout" || r == "donate" || r == "membership" {
		p.Return = r
	}
	p.Added, _ = strconv.ParseInt(c.QueryParam("added"), 10, 64)
	id := c.QueryParam("topupId")
	if id == "" {
		return p
	}
	ctx := c.Request().Context()
	t, err := s.store.TopupOf(ctx, sc.App.ID, sc.User.ID, id)
	if err != nil || t.Status != store.TopupPending || t.PaymentMethod != payments.Stripe {
		return p
	}
	tp, err := s.payments.TopupPayerFor(payments.Stripe)
	if err != nil {
		return p
	}
	started, err := tp.StartTopup(ctx, payments.TopupRequest{Topup: t, Payer: payer(sc)})
	if err != nil {
		s.logger.Warn("card top-up could not be resumed", "topup", t.ID, "err", err)
		p.Error = msgTopupFailed
		return p
	}
	p.Card = &TopupCard{TopupID: t.ID, Amount: t.Amount, Currency: t.Currency, ClientSecret: started.ClientSecret}
	return p
}
