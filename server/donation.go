package server

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/server/payments"
	"marquee/store"
)

// moneyError answers the donation and membership payments' errors
// (errors.go) in their words.
func moneyError(err error) error {
	return answer(err, wording{
		payments.ErrDisabled:       "This payment method is not available",
		payments.ErrNotSupported:   "This payment method is not available",
		store.ErrIllegalTransition: "This order can no longer be paid",
	})
}

// donationScope is the app a donation call is about, for a signed-in
// viewer who may donate there.
func (s *Server) donationScope(c echo.Context, appID string) (*Scope, error) {
	if _, err := requireUser(c); err != nil {
		return nil, err
	}
	if appID == "" {
		return nil, badRequest("appId is required")
	}
	sc, err := s.scopeOf(c, appID)
	if err != nil {
		return nil, err
	}
	if !sc.App.Settings.Features.Donations.Enabled {
		return nil, notFound("This app doesn't have donations enabled.")
	}
	if !access.CanDonate(sc.App.Settings, sc.Role) {
		return nil, forbidden("You cannot donate to this app")
	}
	return sc, nil
}

type donationCreateRequest struct {
	AppID    string `json:"appId"`
	Amount   any    `json:"amount"`
	Currency string `json:"currency"`
	Message  string `json:"message"`
}

// wholeCents reads the amount in cents: a JSON number that is a whole
// number (SPEC.md section 5 sends the dollars times 100).
func wholeCents(v any) (int64, error) {
	f, ok := v.(float64)
	if !ok {
		return 0, badRequest("amount must be a number of cents")
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > 1e15 {
		return 0, badRequest("amount must be a whole number of cents")
	}
	return int64(f), nil
}

// POST /api/donations/create {appId, amount, currency, message}: a PENDING
// donation; it counts once /process has paid it.
func (s *Server) apiDonationCreate(c echo.Context) error {
	var req donationCreateRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	sc, err := s.donationScope(c, req.AppID)
	if err != nil {
		return err
	}
	amount, err := wholeCents(req.Amount)
	if err != nil {
		return err
	}
	d, err := s.store.CreateDonation(c.Request().Context(), store.NewDonation{AppID: sc.App.ID, UserID: sc.User.ID,
		Amount: amount, Currency: req.Currency, Message: req.Message})
	if err != nil {
		return moneyError(err)
	}
	return respondMessage(c, http.StatusCreated, d, "Donation created")
}

type donationProcessRequest struct {
	DonationID    string `json:"donationId"`
	PaymentMethod string `json:"paymentMethod"`
}

// payDonation takes the donation's money through the payments registry
// (the wallet unless another method is named). A card answers what the
// browser needs to finish (the PaymentIntent's client secret) until Stripe
// says the money arrived; the amount is always the stored donation's.
func (s *Server) payDonation(c echo.Context, donationID, method string) (*payments.DonationResult, error) {
	u, err := requireUser(c)
	if err != nil {
		return nil, err
	}
	if donationID == "" {
		return nil, badRequest("donationId is required")
	}
	ctx := c.Request().Context()
	d, err := s.store.DonationByID(ctx, donationID)
	if err != nil || d.UserID != u.ID {
		return nil, notFound("Donation not found")
	}
	if _, err := s.donationScope(c, d.AppID); err != nil {
		return nil, err
	}
	if method == "" {
		method = payments.Wallet
	}
	payer, err := s.payments.DonationPayerFor(method)
	if err != nil {
		return nil, moneyError(err)
	}
	res, err := payer.PayDonation(ctx, payments.DonationRequest{AppID: d.AppID, DonationID: d.ID,
		Payer: payments.Payer{UserID: u.ID, Email: u.Email}})
	if err != nil {
		return nil, donationPaymentError(err)
	}
	return res, nil
}

// donationPaymentError answers a donation's payment errors (errors.go) in
// the donation's words.
func donationPaymentError(err error) error {
	return answer(err, wording{
		store.ErrNotFound:          "Donation not found",
		payments.ErrNotThisOrder:   "This payment does not belong to this donation",
		payments.ErrProvider:       "Failed to process donation",
		payments.ErrDisabled:       "This payment method is not available",
		payments.ErrNotSupported:   "This payment method is not available",
		store.ErrIllegalTransition: "This order can no longer be paid",
	})
}

// DonationProcessed answers /process: the donation and, while a card
// payment is unfinished, the payment to confirm in the browser.
type DonationProcessed struct {
	*store.Donation
	Payment *payments.Started `json:"payment,omitempty"`
}

// POST /api/donations/process {donationId, paymentMethod?}
func (s *Server) apiDonationProcess(c echo.Context) error {
	var req donationProcessRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	res, err := s.payDonation(c, req.DonationID, req.PaymentMethod)
	if err != nil {
		return err
	}
	if res.Donation.Status != store.DonationPaid {
		return respondMessage(c, http.StatusOK, DonationProcessed{Donation: res.Donation, Payment: res.Payment}, "Payment started")
	}
	return respondMessage(c, http.StatusOK, DonationProcessed{Donation: res.Donation}, "Thank you for your support!")
}

// DonationsData is the creator's donations list (page and JSON).
type DonationsData struct {
	Donations []store.DonationView `json:"donations"`
	Totals    store.DonationTotals `json:"totals"`
}

func (s *Server) loadDonations(c echo.Context, sc *Scope) (*DonationsData, store.Pagination, error) {
	if !access.CanSeeDonations(sc.Role) {
		return nil, store.Pagination{}, forbidden("Only the creator and admins see donations")
	}
	page, limit, err := pageParams(c, store.DefaultPageSize)
	if err != nil {
		return nil, store.Pagination{}, err
	}
	list, totals, p, err := s.store.Donations(c.Request().Context(), sc.App.ID, page, limit)
	if err != nil {
		return nil, store.Pagination{}, err
	}
	return &DonationsData{Donations: list, Totals: totals}, p, nil
}

// GET /api/donations/apps/:appId?page&limit: paid donations, newest first,
// with totals (creator and admins).
func (s *Server) apiDonations(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	data, p, err := s.loadDonations(c, sc)
	if err != nil {
		return err
	}
	return respondPage(c, data, p)
}

// GET /apps/:app/donations: the creator's list.
func (s *Server) pageDonations(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusFound, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	data, p, err := s.loadDonations(c, sc)
	if err != nil {
		return err
	}
	props := s.pageProps(c, sc)
	props.Data = map[string]any{"donations": data.Donations, "totals": data.Totals, "pagination": p}
	return s.renderPage(c, "Donations", props)
}

// DonateData is the no-JavaScript donation page: the modal's content as a
// form, and the outcome of the last post.
type DonateData struct {
	SuggestedAmounts []int64 `json:"suggestedAmounts"`
	// CardEnabled: the card method is configured (it needs JavaScript: the
	// Payment Element).
	CardEnabled bool                 `json:"cardEnabled"`
	Tiers       []store.DonationTier `json:"tiers"`
	Balance     int64                `json:"balance"`
	Standing    *store.DonorStanding `json:"standing"`
	Done        bool                 `json:"done"`
	Error       string               `json:"error"`
	Amount      string               `json:"amount"`
}

// GET /apps/:app/donate: 'Show Your Support' as a page, for browsers
// without JavaScript (the header's Donate link) and after a form post.
// A card that needed a redirect (3-D Secure) comes back here with
// ?donation=: the server asks Stripe before thanking anyone.
func (s *Server) pageDonate(c echo.Context) error {
	data := DonateData{Done: c.QueryParam("thanks") == "1"}
	// A Quick Donation amount without JavaScript is a link that comes back
	// here with the amount filled in (nothing is paid before Send).
	if a := c.QueryParam("amount"); a != "" {
		if cents, ok := parseDollars(a); ok {
			data.Amount = fmt.Sprintf("%d.%02d", cents/100, cents%100)
		}
	}
	if id := c.QueryParam("donation"); id != "" && viewerOf(c).User != nil && s.cardStarted(c, id) {
		res, err := s.payDonation(c, id, payments.Stripe)
		switch e := err.(type) {
		case nil:
			if res.Donation.Status == store.DonationPaid {
				data.Done = true
			} else {
				data.Error = "Your card payment is not complete yet. It counts once the payment goes through."
			}
		case *Error:
			if e.Status >= 500 {
				return err
			}
			data.Error = e.Message
		default:
			return err
		}
	}
	return s.renderDonate(c, data, http.StatusOK)
}

// cardStarted reports whether the viewer's donation id has a card payment
// under way (so re-reading it never starts one).
func (s *Server) cardStarted(c echo.Context, id string) bool {
	if !s.payments.Enabled(payments.Stripe) {
		return false
	}
	d, err := s.store.DonationByID(c.Request().Context(), id)
	return err == nil && d.UserID == viewerOf(c).User.ID && d.PaymentMethod == payments.Stripe && d.PaymentRef != ""
}

func (s *Server) renderDonate(c echo.Context, data DonateData, status int) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusFound, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	if !access.CanDonate(sc.App.Settings, sc.Role) {
		return notFound("This app doesn't have donations enabled.")
	}
	ctx := c.Request().Context()
	var err error
	if data.Tiers, err = s.store.DonationTiers(ctx, sc.App.ID); err != nil {
		return err
	}
	if data.Balance, err = s.store.WalletBalance(ctx, sc.App.ID, sc.User.ID); err != nil {
		return err
	}
	if data.Standing, err = s.store.DonorStandingOf(ctx, sc.App.ID, sc.User.ID); err != nil {
		return err
	}
	data.SuggestedAmounts = sc.App.Settings.Features.Donations.Settings.SuggestedAmounts
	data.CardEnabled = s.cardOffered(ctx, sc.App.ID)
	if data.SuggestedAmounts == nil {
		data.SuggestedAmounts = []int64{}
	}
	props := s.pageProps(c, sc)
	props.Data = data
	if status != http.StatusOK {
		props.Status = status
	}
	out, body := s.renderDocument(c, "Donate", props)
	if status != http.StatusOK {
		out = status
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.HTMLBlob(out, body)
}

// parseDollars reads the custom amount field ("12.50", "$12.50") into
// cents, as the modal does (SPEC.md section 5): above 0, at most two
// decimals.
func parseDollars(v string) (int64, bool) {
	v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "$"))
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > 1e9 {
		return 0, false
	}
	cents := math.Round(f * 100)
	if math.Abs(cents-f*100) > 1e-6 {
		return 0, false
	}
	return int64(cents), cents > 0
}

// POST /apps/:app/donate: create and pay in one form post, then back to the
// page with thanks, or the page again with the reason.
func (s *Server) formDonate(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	raw := c.FormValue("amount")
	if raw == "" {
		raw = c.FormValue("suggested")
	}
	fail := func(msg string, status int) error {
		return s.renderDonate(c, DonateData{Error: msg, Amount: raw}, status)
	}
	cents, ok := parseDollars(raw)
	if !ok {
		return fail("Enter an amount above $0", http.StatusBadRequest)
	}
	if _, err := s.donationScope(c, sc.App.ID); err != nil {
		return err
	}
	d, err := s.store.CreateDonation(c.Request().Context(), store.NewDonation{AppID: sc.App.ID, UserID: sc.User.ID,
		Amount: cents, Currency: store.DonationCurrency, Message: c.FormValue("message")})
	if err != nil {
		if e, ok := moneyError(err).(*Error); ok && e.Status < 500 {
			return fail(e.Message, e.Status)
		}
		return err
	}
	if _, err := s.payDonation(c, d.ID, payments.Wallet); err != nil {
		if e, ok := err.(*Error); ok && e.Status < 500 {
			return fail(e.Message, e.Status)
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/donate?thanks=1")
}
