package server

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
	"marquee/server/payments/stripe"
	"marquee/store"
)

// The studio's Payouts screen (issue 24): the creator connects a Stripe
// Express account for the app (made through the API, onboarded through
// Account Links that come back to the studio), sees its state as Stripe's
// account.updated webhooks last reported it, opens Stripe's Express
// dashboard through a login link, and reads the app's balance and its
// statement by month (CSV too). All plain forms and links.

const sectionPayouts = "payouts"

const (
	msgCreatorOnly = "Only the app's creator can manage its payouts"
	// msgPayoutPassword: every payout setting asks for the password again.
	msgPayoutPassword = "Enter your password to change where this app's money goes"
	msgCardsOff       = "Card payments are not configured on this platform"
	msgStripeFailed   = "Stripe could not be reached. Please try again."
	msgNotOnboarded   = "Finish setting up your Stripe account first"
	msgNoAccountYet   = "Connect a Stripe account first"
	payoutsStateNone  = "NOT_CONNECTED"
)

// StudioPayouts is the Payouts screen.
type StudioPayouts struct {
	// CardConfigured: the platform takes cards (Stripe keys are set).
	CardConfigured  bool `json:"cardConfigured"`
	PayoutsRequired bool `json:"payoutsRequired"`
	// CanManage: the viewer is the app's creator, who alone connects.
	CanManage bool `json:"canManage"`
	// State is NOT_CONNECTED, ONBOARDING (details still due), PENDING
	// (submitted, Stripe has not enabled charges yet), RESTRICTED
	// (Stripe disabled charges) or ACTIVE.
	State            string   `json:"state" tstype:"'NOT_CONNECTED' | 'ONBOARDING' | 'PENDING' | 'RESTRICTED' | 'ACTIVE'"`
	AccountID        string   `json:"accountId"`
	ChargesEnabled   bool     `json:"chargesEnabled"`
	PayoutsEnabled   bool     `json:"payoutsEnabled"`
	DetailsSubmitted bool     `json:"detailsSubmitted"`
	CurrentlyDue     []string `json:"currentlyDue"`
	DisabledReason   string   `json:"disabledReason"`
	// FeePercent is the platform's fee on the app's payments ("5", "2.5").
	FeePercent string          `json:"feePercent"`
	Statement  store.Statement `json:"statement"`
}

func payoutState(pa *store.PayoutAccount) string {
	switch {
	case pa == nil || pa.StripeAccountID == "":
		return payoutsStateNone
	case pa.ChargesEnabled:
		return "ACTIVE"
	case !pa.DetailsSubmitted:
		return "ONBOARDING"
	case pa.DisabledReason != "" && pa.DisabledReason != "requirements.pending_verification":
		return "RESTRICTED"
	}
	return "PENDING"
}

func percentText(bp int64) string {
	s := strconv.FormatInt(bp/100, 10)
	if r := bp % 100; r != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%02d", r), "0")
	}
	return s
}

func (s *Server) payoutsData(ctx context.Context, sc *Scope) (*StudioPayouts, error) {
	pa, err := s.store.PayoutAccountOf(ctx, sc.App.ID)
	if err != nil {
		return nil, err
	}
	bp, err := s.store.AppFeeBP(ctx, sc.App.ID)
	if err != nil {
		return nil, err
	}
	st, err := s.store.StatementOf(ctx, sc.App.ID)
	if err != nil {
		return nil, err
	}
	d := &StudioPayouts{CardConfigured: s.cardRenewals != nil, PayoutsRequired: s.cfg.PayoutsRequired,
		CanManage: sc.Role == store.RoleCreator, State: payoutState(pa), CurrentlyDue: []string{},
		FeePercent: percentText(bp), Statement: *st}
	if pa != nil {
		d.AccountID, d.ChargesEnabled, d.PayoutsEnabled, d.DetailsSubmitted = pa.StripeAccountID, pa.ChargesEnabled, pa.PayoutsEnabled, pa.DetailsSubmitted
		d.DisabledReason = pa.DisabledReason
		if pa.CurrentlyDue != "" {
			d.CurrentlyDue = strings.Split(pa.CurrentlyDue, ",")
		}
	}
	return d, nil
}

func (s *Server) renderStudioPayouts(c echo.Context, sc *Scope, d StudioData, status int) error {
	p, err := s.payoutsData(c.Request().Context(), sc)
	if err != nil {
		return err
	}
	d.Section, d.Payouts = sectionPayouts, p
	return s.renderStudio(c, sc, d, status)
}

// GET /apps/:app/studio/payouts
func (s *Server) pageStudioPayouts(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	return s.renderStudioPayouts(c, sc, StudioData{}, http.StatusOK)
}

// payoutsScope is the scope of a payouts action: the app's creator, with
// cards configured.
func (s *Server) payoutsScope(c echo.Context) (*Scope, error) {
	sc, err := studioScope(c)
	if err != nil {
		return nil, err
	}
	if sc.Role != store.RoleCreator {
		return nil, forbidden(msgCreatorOnly)
	}
	return sc, nil
}

// payoutPassword refuses an action that decides where the app's money
// goes unless the creator typed their password again (the form's
// "password"): a session cookie alone, stolen or left open, cannot redirect
// the app's revenue.
func payoutPassword(c echo.Context, sc *Scope) (*Error, error) {
	if !passwordMatches(sc.User, c.FormValue("password")) {
		return fieldRefusal("password", msgPayoutPassword), nil
	}
	return nil, nil
}

// payoutsFail shows the screen again with what went wrong.
func (s *Server) payoutsFail(c echo.Context, sc *Scope, status int, msg string, err error) error {
	if err != nil {
		s.logger.Warn("payouts: stripe call failed", "app", sc.App.ID, "err", err)
	}
	return s.renderStudioPayouts(c, sc, StudioData{Form: "payouts", Error: msg}, status)
}

// onboardingLink answers a fresh Account Link for the app's account.
func (s *Server) onboardingLink(c echo.Context, sc *Scope, account string) (string, error) {
	return s.cardRenewals.Client.AccountLink(c.Request().Context(), account,
		s.appURL(sc, "/studio/payouts/refresh", nil), s.appURL(sc, "/studio/payouts/return", nil))
}

// POST /apps/:app/studio/payouts/connect: the app's Express account (made
// once: the idempotency key is the app's, and the first account recorded
// stays), then Stripe's onboarding.
func (s *Server) formPayoutsConnect(c echo.Context) error {
	sc, err := s.payoutsScope(c)
	if err != nil {
		return err
	}
	if e, err := payoutPassword(c, sc); e != nil || err != nil {
		if err != nil {
			return err
		}
		return s.renderStudioPayouts(c, sc, StudioData{Form: "payouts", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if s.cardRenewals == nil {
		return s.payoutsFail(c, sc, http.StatusBadRequest, msgCardsOff, nil)
	}
	ctx := c.Request().Context()
	pa, err := s.store.PayoutAccountOf(ctx, sc.App.ID)
	if err != nil {
		return err
	}
	if pa == nil || pa.StripeAccountID == "" {
		st, err := s.cardRenewals.Client.CreateAccount(ctx, sc.App.ID, sc.User.Email, stripe.ConnectAccountKey(sc.App.ID))
		if err != nil {
			return s.payoutsFail(c, sc, http.StatusBadGateway, msgStripeFailed, err)
		}
		if pa, err = s.store.AttachStripeAccount(ctx, sc.App.ID, sc.User.ID, st.AccountID); err != nil {
			return err
		}
	}
	if pa.ChargesEnabled && pa.DetailsSubmitted {
		return studioBack(c, sc, "/payouts", "payouts-ready")
	}
	link, err := s.onboardingLink(c, sc, pa.StripeAccountID)
	if err != nil {
		return s.payoutsFail(c, sc, http.StatusBadGateway, msgStripeFailed, err)
	}
	return c.Redirect(http.StatusSeeOther, link)
}

// GET /apps/:app/studio/payouts/refresh: Stripe sends the creator here
// when an onboarding link expired or was used; a new one continues.
func (s *Server) pagePayoutsRefresh(c echo.Context) error {
	sc, err := s.payoutsScope(c)
	if err != nil {
		return err
	}
	pa, err := s.store.PayoutAccountOf(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	if s.cardRenewals == nil || pa == nil || pa.StripeAccountID == "" {
		return studioBack(c, sc, "/payouts", "payouts-none")
	}
	link, err := s.onboardingLink(c, sc, pa.StripeAccountID)
	if err != nil {
		return s.payoutsFail(c, sc, http.StatusBadGateway, msgStripeFailed, err)
	}
	return c.Redirect(http.StatusSeeOther, link)
}

// GET /apps/:app/studio/payouts/return: the creator left Stripe's
// onboarding (finished or not: Stripe says which). The account is read
// from Stripe at once, so the screen is right even before the
// account.updated webhook arrives.
func (s *Server) pagePayoutsReturn(c echo.Context) error {
	sc, err := s.payoutsScope(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	pa, err := s.store.PayoutAccountOf(ctx, sc.App.ID)
	if err != nil {
		return err
	}
	if s.cardRenewals == nil || pa == nil || pa.StripeAccountID == "" {
		return studioBack(c, sc, "/payouts", "payouts-none")
	}
	st, err := s.cardRenewals.Client.RetrieveAccount(ctx, pa.StripeAccountID)
	if err != nil {
		return s.payoutsFail(c, sc, http.StatusBadGateway, msgStripeFailed, err)
	}
	if pa, _, err = s.store.ApplyAccountState(ctx, *st); err != nil {
		return err
	}
	notice := "payouts-pending"
	if pa.ChargesReady() {
		notice = "payouts-ready"
	}
	return studioBack(c, sc, "/payouts", notice)
}

// POST /apps/:app/studio/payouts/dashboard: a one-time login link into the
// account's Express dashboard.
func (s *Server) formPayoutsDashboard(c echo.Context) error {
	sc, err := s.payoutsScope(c)
	if err != nil {
		return err
	}
	// The dashboard is where the bank account is changed.
	if e, err := payoutPassword(c, sc); e != nil || err != nil {
		if err != nil {
			return err
		}
		return s.renderStudioPayouts(c, sc, StudioData{Form: "payouts", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	ctx := c.Request().Context()
	pa, err := s.store.PayoutAccountOf(ctx, sc.App.ID)
	if err != nil {
		return err
	}
	switch {
	case s.cardRenewals == nil:
		return s.payoutsFail(c, sc, http.StatusBadRequest, msgCardsOff, nil)
	case pa == nil || pa.StripeAccountID == "":
		return s.payoutsFail(c, sc, http.StatusConflict, msgNoAccountYet, nil)
	case !pa.DetailsSubmitted:
		return s.payoutsFail(c, sc, http.StatusConflict, msgNotOnboarded, nil)
	}
	link, err := s.cardRenewals.Client.LoginLink(ctx, pa.StripeAccountID)
	if err != nil {
		return s.payoutsFail(c, sc, http.StatusBadGateway, msgStripeFailed, err)
	}
	if err := s.store.AuditPayoutAction(ctx, sc.App.ID, sc.User.ID, "payouts.dashboard", "Opened the Stripe dashboard of "+pa.StripeAccountID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, link)
}

// GET /apps/:app/studio/payouts/statement.csv: the statement by month.
func (s *Server) studioStatementCSV(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	st, err := s.store.StatementOf(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+sc.App.Name+`-statement.csv"`)
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	return writeStatementCSV(c.Response(), st)
}

func cents(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

func writeStatementCSV(out io.Writer, st *store.Statement) error {
	w := csv.NewWriter(out)
	rows := [][]string{{"month", "payments", "gross", "platform_fees", "processor_fees", "refunds", "fees_refunded", "net", "currency"}}
	line := func(m store.StatementMonth, month string) []string {
		return []string{month, strconv.Itoa(m.Payments), cents(m.Gross), cents(m.Fees), cents(m.ProcessorFees), cents(m.Refunds), cents(m.FeesRefunds),
			cents(m.Net), st.Currency}
	}
	for _, m := range st.Months {
		rows = append(rows, line(m, m.Month))
	}
	rows = append(rows, line(st.Totals, "total"))
	if err := w.WriteAll(rows); err != nil {
		return fmt.Errorf("write statement: %w", err)
	}
	return nil
}

// POST /api/webhooks/stripe-connect: Stripe's word about connected
// accounts, signed with the Connect endpoint's own secret
// (STRIPE_CONNECT_WEBHOOK_SECRET). A forged or stale delivery is 400.
func (s *Server) apiConnectWebhook(c echo.Context) error {
	if s.cardRenewals == nil {
		return badRequest("Payment method not configured")
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return badRequest("Invalid request body")
	}
	res, err := s.cardRenewals.HandleConnectWebhook(c.Request().Context(), body, c.Request().Header)
	if errors.Is(err, payments.ErrInvalidWebhook) {
		s.logger.Warn("connect webhook refused", "err", err)
		return answer(err, nil)
	}
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, ConnectWebhookReceived{Account: res.Account, Received: true, Status: res.Status})
}

// ConnectWebhookReceived is data of POST /api/webhooks/stripe-connect.
type ConnectWebhookReceived struct {
	Account  string `json:"account"`
	Received bool   `json:"received"`
	Status   string `json:"status"`
}
