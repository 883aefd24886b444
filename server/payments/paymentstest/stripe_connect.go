package paymentstest

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	sg "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

// The Connect part of the fake, as Stripe documents it for Express accounts
// and destination charges:
//   - POST /v1/accounts (type express), GET /v1/accounts/{id};
//   - POST /v1/account_links (account_onboarding, refresh_url and
//     return_url required): a one-time link to the fake's onboarding page
//     (/connect/onboarding/{token}), whose form completes the account,
//     emits account.updated to the Connect endpoint and sends the browser
//     to return_url; a used or expired link sends it to refresh_url;
//   - POST /v1/accounts/{id}/login_links: only for an Express account that
//     finished onboarding;
//   - destination charges: transfer_data[destination] must name an account
//     that can take charges, application_fee_amount needs a destination and
//     may not pass the amount; when the charge succeeds a transfer of the
//     amount to the account and an application fee are made;
//   - refunds: reverse_transfer (only on a charge with a transfer) reverses
//     the refund's share of the transfer, refund_application_fee gives the
//     fee back in proportion of all refunded so far;
//   - subscriptions with transfer_data[destination] and
//     application_fee_percent: each paid invoice carries its fee and
//     transfer;
//   - Connect events carry "account" and are signed with the Connect
//     endpoint's own secret (ConnectWebhookSecret), delivered to
//     ConnectWebhookURL.

// Transfer is a transfer the fake made (a destination charge's).
type Transfer struct {
	ID, Destination, Charge string
	Amount, Reversed        int64
}

// ApplicationFee is a fee the platform took on a destination charge.
type ApplicationFee struct {
	ID, Account, Charge string
	Amount, Refunded    int64
}

type accountLink struct {
	account, refreshURL, returnURL string
	expires                        time.Time
	used                           bool
}

func (s *Stripe) connectInit() {
	if s.accounts == nil {
		s.accounts = map[string]map[string]any{}
		s.links = map[string]*accountLink{}
		s.transfers = map[string]*Transfer{}
		s.appFees = map[string]*ApplicationFee{}
	}
}

// Account answers a copy of a connected account.
func (s *Stripe) Account(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.accounts[id])
}

// AccountIDs lists the connected accounts made.
func (s *Stripe) AccountIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.accounts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Transfers lists the transfers made, by id.
func (s *Stripe) Transfers() []Transfer {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Transfer
	for _, t := range s.transfers {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ApplicationFees lists the application fees taken, by id.
func (s *Stripe) ApplicationFees() []ApplicationFee {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ApplicationFee
	for _, f := range s.appFees {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CompleteOnboarding plays the creator finishing Stripe's onboarding of
// account: it can take charges and be paid out, and account.updated is
// emitted to the Connect endpoint (and answered).
func (s *Stripe) CompleteOnboarding(account string) SignedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completeLocked(s.accounts[account])
}

func (s *Stripe) completeLocked(a map[string]any) SignedEvent {
	if a == nil {
		return SignedEvent{}
	}
	a["details_submitted"], a["charges_enabled"], a["payouts_enabled"] = true, true, true
	a["requirements"] = map[string]any{"currently_due": []any{}, "eventually_due": []any{}, "past_due": []any{}, "disabled_reason": nil}
	a["capabilities"] = map[string]any{"card_payments": "active", "transfers": "active"}
	return s.emitConnectLocked("account.updated", a["id"].(string), a)
}

// ConnectEvent builds and signs an event about account with the Connect
// secret, without sending it (a test delivers it, late or twice).
func (s *Stripe) ConnectEvent(typ, account string, object map[string]any, created time.Time) SignedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connectEventLocked(typ, account, object, created)
}

func (s *Stripe) connectEventLocked(typ, account string, object map[string]any, created time.Time) SignedEvent {
	id := s.nextID("evt")
	payload, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": sg.APIVersion, "created": created.Unix(), "account": account,
		"type": typ, "livemode": false, "pending_webhooks": 1, "data": map[string]any{"object": object},
	})
	h := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: s.ConnectWebhookSecret, Timestamp: time.Now()}).Header
	return SignedEvent{ID: id, Type: typ, Payload: payload, Header: h}
}

func (s *Stripe) emitConnectLocked(typ, account string, object map[string]any) SignedEvent {
	ev := s.connectEventLocked(typ, account, clone(object), time.Now())
	s.events = append(s.events, ev)
	if s.ConnectWebhookURL != "" {
		go deliver(s.ConnectWebhookURL, ev.Payload, http.Header{"Stripe-Signature": {ev.Header}})
	}
	return ev
}

// connect answers the Connect API; false when the request is not one.
func (s *Stripe) connect(w http.ResponseWriter, r *http.Request, parts []string) bool {
	s.connectInit()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/accounts":
		typ := r.PostForm.Get("type")
		if typ != "express" && typ != "standard" && typ != "custom" {
			stripeError(w, 400, "invalid_request_error", "parameter_invalid_empty", "You must specify a valid account type: express, standard or custom.", map[string]any{"param": "type"})
			return true
		}
		id := s.nextID("acct")
		a := map[string]any{"id": id, "object": "account", "type": typ, "email": nilIfEmpty(r.PostForm.Get("email")),
			"charges_enabled": false, "payouts_enabled": false, "details_submitted": false, "metadata": formMeta(r),
			"created": time.Now().Unix(), "country": "US", "default_currency": "usd",
			"capabilities": map[string]any{"card_payments": capability(r, "card_payments"), "transfers": capability(r, "transfers")},
			"requirements": map[string]any{"currently_due": []any{"business_type", "external_account", "tos_acceptance.date"},
				"eventually_due": []any{}, "past_due": []any{}, "disabled_reason": "requirements.past_due"}}
		s.accounts[id] = a
		writeJSON(w, 200, a)
	case len(parts) == 3 && parts[0] == "v1" && parts[1] == "accounts" && r.Method == http.MethodGet:
		a := s.accounts[parts[2]]
		if a == nil {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such account: '"+parts[2]+"'", map[string]any{"param": "account"})
			return true
		}
		writeJSON(w, 200, a)
	case len(parts) == 4 && parts[0] == "v1" && parts[1] == "accounts" && parts[3] == "login_links" && r.Method == http.MethodPost:
		a := s.accounts[parts[2]]
		if a == nil {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such account: '"+parts[2]+"'", map[string]any{"param": "account"})
			return true
		}
		if a["type"] != "express" {
			stripeError(w, 400, "invalid_request_error", "", "You can only create login links for Express accounts.", nil)
			return true
		}
		if a["details_submitted"] != true {
			stripeError(w, 400, "invalid_request_error", "", "Cannot create a login link for an account that has not completed onboarding.", nil)
			return true
		}
		writeJSON(w, 200, map[string]any{"object": "login_link", "created": time.Now().Unix(),
			"url": s.URL + "/connect/express/" + parts[2]})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/account_links":
		a := s.accounts[r.PostForm.Get("account")]
		for _, p := range []string{"account", "refresh_url", "return_url", "type"} {
			if r.PostForm.Get(p) == "" {
				stripeError(w, 400, "invalid_request_error", "parameter_missing", "Missing required param: "+p+".", map[string]any{"param": p})
				return true
			}
		}
		if a == nil {
			stripeError(w, 400, "invalid_request_error", "resource_missing", "No such account: '"+r.PostForm.Get("account")+"'", map[string]any{"param": "account"})
			return true
		}
		if t := r.PostForm.Get("type"); t != "account_onboarding" && t != "account_update" {
			stripeError(w, 400, "invalid_request_error", "parameter_invalid_empty", "Invalid type: must be one of account_onboarding or account_update", map[string]any{"param": "type"})
			return true
		}
		for _, p := range []string{"refresh_url", "return_url"} {
			if u, err := url.Parse(r.PostForm.Get(p)); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				stripeError(w, 400, "invalid_request_error", "url_invalid", "Not a valid URL", map[string]any{"param": p})
				return true
			}
		}
		token := strings.TrimPrefix(s.nextID("acctlink"), "acctlink_")
		exp := time.Now().Add(5 * time.Minute)
		s.links[token] = &accountLink{account: a["id"].(string), refreshURL: r.PostForm.Get("refresh_url"),
			returnURL: r.PostForm.Get("return_url"), expires: exp}
		writeJSON(w, 200, map[string]any{"object": "account_link", "created": time.Now().Unix(), "expires_at": exp.Unix(),
			"url": s.URL + "/connect/onboarding/" + token})
	case len(parts) == 3 && parts[0] == "v1" && parts[1] == "transfers" && r.Method == http.MethodGet:
		t := s.transfers[parts[2]]
		if t == nil {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such transfer: '"+parts[2]+"'", nil)
			return true
		}
		writeJSON(w, 200, map[string]any{"id": t.ID, "object": "transfer", "amount": t.Amount, "amount_reversed": t.Reversed,
			"destination": t.Destination, "source_transaction": t.Charge, "currency": "usd", "reversed": t.Reversed == t.Amount})
	case len(parts) == 3 && parts[0] == "v1" && parts[1] == "application_fees" && r.Method == http.MethodGet:
		f := s.appFees[parts[2]]
		if f == nil {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such application fee: '"+parts[2]+"'", nil)
			return true
		}
		writeJSON(w, 200, map[string]any{"id": f.ID, "object": "application_fee", "amount": f.Amount, "amount_refunded": f.Refunded,
			"account": f.Account, "charge": f.Charge, "currency": "usd", "refunded": f.Refunded == f.Amount})
	default:
		return false
	}
	return true
}

func capability(r *http.Request, name string) string {
	if r.PostForm.Get("capabilities["+name+"][requested]") == "true" {
		return "inactive"
	}
	return "unrequested"
}

// checkDestination refuses a PaymentIntent's Connect parameters the way
// Stripe does; it answers false when it wrote the error.
func (s *Stripe) checkDestination(w http.ResponseWriter, r *http.Request, amount int64) bool {
	s.connectInit()
	dest := r.PostForm.Get("transfer_data[destination]")
	feeText := r.PostForm.Get("application_fee_amount")
	if feeText != "" {
		fee, err := strconv.ParseInt(feeText, 10, 64)
		if err != nil || fee < 0 {
			stripeError(w, 400, "invalid_request_error", "parameter_invalid_integer", "Invalid application_fee_amount", map[string]any{"param": "application_fee_amount"})
			return false
		}
		if dest == "" && r.PostForm.Get("on_behalf_of") == "" {
			stripeError(w, 400, "invalid_request_error", "", "Can only apply an application_fee_amount when the PaymentIntent is attempting a direct payment (using an OAuth key or Stripe-Account header) or destination payment (using `transfer_data[destination]`).", map[string]any{"param": "application_fee_amount"})
			return false
		}
		if fee > amount {
			stripeError(w, 400, "invalid_request_error", "", "The application fee amount may not be greater than the amount.", map[string]any{"param": "application_fee_amount"})
			return false
		}
	}
	if !s.checkOnBehalfOf(w, r, dest) {
		return false
	}
	if dest == "" {
		return true
	}
	a := s.accounts[dest]
	if a == nil {
		stripeError(w, 400, "invalid_request_error", "resource_missing", "No such destination: '"+dest+"'", map[string]any{"param": "transfer_data[destination]"})
		return false
	}
	if caps, _ := a["capabilities"].(map[string]any); caps["transfers"] != "active" {
		stripeError(w, 400, "invalid_request_error", "insufficient_capabilities_for_transfer",
			"Your destination account needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments", map[string]any{"param": "transfer_data[destination]"})
		return false
	}
	return true
}

// checkOnBehalfOf refuses on_behalf_of as Stripe does: the account must
// exist and take card payments itself, and a destination charge made on
// behalf of an account must transfer to that same account. It answers
// false when it wrote the error.
func (s *Stripe) checkOnBehalfOf(w http.ResponseWriter, r *http.Request, dest string) bool {
	obo := r.PostForm.Get("on_behalf_of")
	if obo == "" {
		return true
	}
	a := s.accounts[obo]
	if a == nil {
		stripeError(w, 400, "invalid_request_error", "resource_missing", "No such account: '"+obo+"'", map[string]any{"param": "on_behalf_of"})
		return false
	}
	if caps, _ := a["capabilities"].(map[string]any); caps["card_payments"] != "active" {
		stripeError(w, 400, "invalid_request_error", "", "The account referenced in the 'on_behalf_of' parameter must have the card_payments capability active.", map[string]any{"param": "on_behalf_of"})
		return false
	}
	if dest != "" && dest != obo {
		stripeError(w, 400, "invalid_request_error", "", "The 'transfer_data[destination]' must be the same account as 'on_behalf_of'.", map[string]any{"param": "on_behalf_of"})
		return false
	}
	return true
}

// settleLocked makes a succeeded destination charge's transfer and fee.
func (s *Stripe) settleLocked(pi map[string]any) {
	s.connectInit()
	td, _ := pi["transfer_data"].(map[string]any)
	if td == nil || td["destination"] == nil || pi["transfer"] != nil {
		return
	}
	dest := td["destination"].(string)
	charge := pi["latest_charge"].(string)
	t := &Transfer{ID: s.nextID("tr"), Destination: dest, Charge: charge, Amount: num(pi["amount_received"])}
	s.transfers[t.ID] = t
	pi["transfer"] = t.ID
	if fee := num(pi["application_fee_amount"]); fee > 0 {
		f := &ApplicationFee{ID: s.nextID("fee"), Account: dest, Charge: charge, Amount: fee}
		s.appFees[f.ID] = f
		pi["application_fee"] = f.ID
	}
}

// refundConnectLocked applies a refund's reverse_transfer and
// refund_application_fee to pi, which has refunded (all so far) of
// received; it answers false when it wrote Stripe's refusal.
func (s *Stripe) refundConnectLocked(w http.ResponseWriter, r *http.Request, pi map[string]any, amount, refundedBefore, received int64) (map[string]any, bool) {
	s.connectInit()
	out := map[string]any{}
	reverse := r.PostForm.Get("reverse_transfer") == "true"
	refundFee := r.PostForm.Get("refund_application_fee") == "true"
	var tr *Transfer
	if id, _ := pi["transfer"].(string); id != "" {
		tr = s.transfers[id]
	}
	if reverse && tr == nil {
		stripeError(w, 400, "invalid_request_error", "", "You cannot reverse the transfer of a charge that has no transfer (reverse_transfer is only for destination charges).", map[string]any{"param": "reverse_transfer"})
		return nil, false
	}
	if reverse {
		// The transfer comes back in the refund's proportion.
		want := tr.Amount * (refundedBefore + amount) / received
		if refundedBefore+amount >= received {
			want = tr.Amount
		}
		if back := want - tr.Reversed; back > 0 {
			tr.Reversed += back
			out["transfer_reversal"] = s.nextID("trr")
			out["transfer_reversal_amount"] = back
		}
	}
	if refundFee {
		if id, _ := pi["application_fee"].(string); id != "" {
			f := s.appFees[id]
			total := refundedBefore + amount
			want := f.Amount
			if total < received {
				want = (f.Amount*total + received/2) / received
			}
			if back := want - f.Refunded; back > 0 {
				f.Refunded += back
				out["application_fee_refund_amount"] = back
			}
		}
	}
	return out, true
}

// onboardingPage is the fake's stand-in for Stripe's hosted onboarding: a
// page with one button that completes the account.
func (s *Stripe) onboardingPage(w http.ResponseWriter, r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, "/connect/") {
		return false
	}
	s.connectInit()
	if strings.HasPrefix(r.URL.Path, "/connect/express/") {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Express dashboard</title><h1>Express dashboard of %s</h1>",
			html.EscapeString(strings.TrimPrefix(r.URL.Path, "/connect/express/")))
		return true
	}
	token := strings.TrimPrefix(r.URL.Path, "/connect/onboarding/")
	l := s.links[token]
	if l == nil {
		http.NotFound(w, r)
		return true
	}
	if l.used || time.Now().After(l.expires) {
		http.Redirect(w, r, l.refreshURL, http.StatusSeeOther)
		return true
	}
	if r.Method == http.MethodPost {
		l.used = true
		s.completeLocked(s.accounts[l.account])
		http.Redirect(w, r, l.returnURL, http.StatusSeeOther)
		return true
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>Stripe onboarding (fake)</title>
<h1>Set up payouts for %s</h1><form method="post"><button type="submit" id="fake-onboarding-submit">Agree and submit</button></form>`,
		html.EscapeString(l.account))
	return true
}
