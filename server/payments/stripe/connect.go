package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	sg "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"marquee/server/payments"
	"marquee/store"
)

// Stripe Connect (issue 24): each app's creator gets an Express account,
// onboards it through Account Links, and reaches Stripe's Express
// dashboard through login links. Card payments are destination charges
// (transfer_data.destination with application_fee_amount); Connect
// webhooks (account.updated) are signed with their own endpoint's secret.

// ConnectAccountKey is the idempotency key of an app's Express account: two
// concurrent Connect clicks make one account.
func ConnectAccountKey(appID string) string { return "marquee-app-" + appID + "-connect-account" }

// CreateAccount makes an Express account for an app, asking for card
// payments and transfers (what destination charges need).
func (c *Client) CreateAccount(ctx context.Context, appID, email, idempotencyKey string) (*store.AccountState, error) {
	p := &sg.AccountCreateParams{
		Type: sg.String(string(sg.AccountTypeExpress)),
		Capabilities: &sg.AccountCreateCapabilitiesParams{
			CardPayments: &sg.AccountCreateCapabilitiesCardPaymentsParams{Requested: sg.Bool(true)},
			Transfers:    &sg.AccountCreateCapabilitiesTransfersParams{Requested: sg.Bool(true)},
		},
	}
	if email != "" {
		p.Email = sg.String(email)
	}
	p.AddMetadata("appId", appID)
	if idempotencyKey != "" {
		p.SetIdempotencyKey(idempotencyKey)
	}
	a, err := c.sc.V1Accounts.Create(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("create account: %w", err)
	}
	return AccountStateOf(a, time.Now().Unix()), nil
}

// RetrieveAccount asks Stripe how a connected account stands.
func (c *Client) RetrieveAccount(ctx context.Context, id string) (*store.AccountState, error) {
	a, err := c.sc.V1Accounts.GetByID(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("retrieve account: %w", err)
	}
	return AccountStateOf(a, time.Now().Unix()), nil
}

// AccountStateOf is the part of an account the product keeps.
func AccountStateOf(a *sg.Account, at int64) *store.AccountState {
	st := &store.AccountState{AccountID: a.ID, ChargesEnabled: a.ChargesEnabled, PayoutsEnabled: a.PayoutsEnabled,
		DetailsSubmitted: a.DetailsSubmitted, At: at}
	if a.Requirements != nil {
		st.CurrentlyDue = a.Requirements.CurrentlyDue
		st.DisabledReason = string(a.Requirements.DisabledReason)
	}
	return st
}

// AccountLink makes a one-time onboarding link for account: Stripe sends
// the creator to returnURL when they leave the flow and to refreshURL when
// the link expired or was used already.
func (c *Client) AccountLink(ctx context.Context, account, refreshURL, returnURL string) (string, error) {
	l, err := c.sc.V1AccountLinks.Create(ctx, &sg.AccountLinkCreateParams{
		Account: sg.String(account), RefreshURL: sg.String(refreshURL), ReturnURL: sg.String(returnURL),
		Type: sg.String(string(sg.AccountLinkTypeAccountOnboarding)),
	})
	if err != nil {
		return "", fmt.Errorf("create account link: %w", err)
	}
	return l.URL, nil
}

// LoginLink makes a one-time link into the Express dashboard of account.
func (c *Client) LoginLink(ctx context.Context, account string) (string, error) {
	l, err := c.sc.V1LoginLinks.Create(ctx, &sg.LoginLinkCreateParams{Account: sg.String(account)})
	if err != nil {
		return "", fmt.Errorf("create login link: %w", err)
	}
	return l.URL, nil
}

// VerifyConnectEvent checks a Connect webhook's signature with the Connect
// endpoint's own secret.
func (c *Client) VerifyConnectEvent(payload []byte, header, secret string) (sg.Event, error) {
	if secret == "" {
		return sg.Event{}, ErrNoWebhookSecret
	}
	ev, err := webhook.ConstructEventWithOptions(payload, header, secret, webhook.ConstructEventOptions{
		Tolerance: c.tolerance, IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		return sg.Event{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return ev, nil
}

// ConnectResult is what a Connect webhook did.
type ConnectResult struct {
	AppID   string
	Account string
	Status  string
}

// HandleConnectWebhook verifies a Connect delivery with the Connect
// endpoint's secret and applies account.updated: the app's account state
// as of the event's time (a late, older event changes nothing). An account
// no app has is ignored.
func (p *Provider) HandleConnectWebhook(ctx context.Context, body []byte, header http.Header) (*ConnectResult, error) {
	ev, err := p.Client.VerifyConnectEvent(body, header.Get("Stripe-Signature"), p.ConnectWebhookSecret)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", payments.ErrInvalidWebhook, err)
	}
	switch ev.Type {
	case "account.updated":
		var a sg.Account
		if err := json.Unmarshal(ev.Data.Raw, &a); err != nil || a.ID == "" {
			return nil, fmt.Errorf("%w: account: %v", payments.ErrInvalidWebhook, err)
		}
		pa, changed, err := p.Store.ApplyAccountState(ctx, *AccountStateOf(&a, ev.Created))
		if err != nil {
			return nil, err
		}
		if pa == nil {
			return &ConnectResult{Account: a.ID, Status: store.OutcomeIgnored}, nil
		}
		status := "updated"
		if !changed {
			status = "stale"
		}
		return &ConnectResult{AppID: pa.AppID, Account: a.ID, Status: status}, nil
	case "account.application.deauthorized":
		// The creator disconnected the platform: no more charges to it.
		pa, _, err := p.Store.ApplyAccountState(ctx, store.AccountState{AccountID: ev.Account, DisabledReason: "deauthorized", At: ev.Created})
		if err != nil {
			return nil, err
		}
		if pa == nil {
			return &ConnectResult{Account: ev.Account, Status: store.OutcomeIgnored}, nil
		}
		return &ConnectResult{AppID: pa.AppID, Account: ev.Account, Status: "deauthorized"}, nil
	}
	return &ConnectResult{Account: ev.Account, Status: store.OutcomeIgnored}, nil
}
