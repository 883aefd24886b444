package paypal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"marquee/server/payments"
	"marquee/store"
)

// Moving a PayPal membership between tiers (issue 40 item 4; the states
// are store/paypal_tier_change.go's). PayPal's revise moves the
// subscription to the new tier's plan once the member approves it, and
// bills that plan from the next cycle without prorating. So an upgrade
// charges its prorated difference itself: a one-off Orders v2 order
// (custom_id "tierup:ID", to the operator's account as the subscription's
// payments are) that the member approves right after the revision; its
// capture starts the new tier at once. A downgrade (and calling one off)
// needs the revision only: the tier changes at the period end, when PayPal
// bills the lower plan.

const tierUpPrefix = "tierup:"

// tierUpOf answers the tier change a PayPal custom_id names, "" for others.
func tierUpOf(customID string) string {
	if id, ok := strings.CutPrefix(customID, tierUpPrefix); ok {
		return id
	}
	return ""
}

// TierChangeURLs are where PayPal sends the member back from a tier
// change's approvals, made for the change's id.
type TierChangeURLs func(changeID string) (returnURL, cancelURL string)

// ReviseTier asks PayPal to move the subscription renewing a membership to
// the quoted tier (the tier's plan at the member's cycle, made once), and
// answers the move with where the member approves it. Concurrent and
// repeated requests share the move and its PayPal-Request-Id: PayPal
// revises once.
//
// An upgrade's offer code discounts its difference (the one-off order)
// and, while it runs, the renewals: the plan revised to then bills the
// code's price for exactly the renewals the code discounts (a TRIAL cycle
// of that many cycles, PayPal's way to price the first cycles apart) and
// the list price after, or the code's price every cycle for a code that
// runs for ever. PayPal bills a revised plan from its first cycle at the
// next billing time, so its TRIAL cycles start with the first renewal
// after the upgrade, and nothing has to revise it back later.
func (p *Provider) ReviseTier(ctx context.Context, appID, userID string, q *store.TierChange, urls TierChangeURLs) (*store.PayPalTierChange, error) {
	line := &store.MembershipLine{PlanID: q.To.ID, Name: q.To.Name, Cycle: q.Cycle, Currency: q.Currency, Price: q.Price}
	if o := q.Offer; o != nil && q.Direction == store.TierUpgrade && o.DiscountLeft != 0 && q.NextCharge < q.Price {
		// As a join's line: the plan's first payment (here the first
		// renewal) at the code's price, DiscountLeft more after it.
		line.Price, line.List, line.DiscountLeft = q.NextCharge, q.Price, o.DiscountLeft-1
		if o.DiscountLeft < 0 {
			line.DiscountLeft = -1
		}
	}
	planID, err := p.planFor(ctx, &store.Order{AppID: appID}, line)
	if err != nil {
		return nil, err
	}
	row, err := p.Store.OpenPayPalTierChange(ctx, q, userID, planID)
	if err != nil {
		return nil, err
	}
	if row.Status != store.PayPalChangePending || row.ApprovalURL != "" {
		return row, nil
	}
	ret, cancel := urls(row.ID)
	approval, err := p.Client.ReviseSubscription(ctx, row.ProviderRef, planID, ret, cancel, "marquee-revise-"+row.ID)
	if err != nil {
		return nil, payments.ProviderError("paypal", err)
	}
	if err := p.Store.SetPayPalChangeApproval(ctx, row.ID, approval); err != nil {
		return nil, err
	}
	row.ApprovalURL = approval
	return row, nil
}

// ResumeTierChange takes a move as far as PayPal lets it (the return from
// an approval, its reloads, the membership page's "finish" link) and
// answers it with where the member goes next: PayPal's approval of the
// revision or of the upgrade's difference, or "" when nothing waits for
// the member.
func (p *Provider) ResumeTierChange(ctx context.Context, id string, urls TierChangeURLs) (*store.PayPalTierChange, string, error) {
	row, err := p.Store.PayPalTierChangeByID(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if row.Status == store.PayPalChangePending {
		s, err := p.Client.GetSubscription(ctx, row.ProviderRef)
		if err != nil {
			return nil, "", payments.ProviderError("paypal", err)
		}
		if s.PlanID != row.PayPalPlanID {
			return row, row.ApprovalURL, nil // not approved yet
		}
		if row, err = p.Store.ConfirmPayPalRevision(ctx, row.ID, time.Now()); err != nil {
			return nil, "", err
		}
	}
	if row.Status != store.PayPalChangeRevised {
		return row, "", nil
	}
	return p.chargeUpgrade(ctx, row, urls)
}

// chargeUpgrade makes (once) the PayPal order paying a revised upgrade's
// difference and captures it once the member approved it.
func (p *Provider) chargeUpgrade(ctx context.Context, row *store.PayPalTierChange, urls TierChangeURLs) (*store.PayPalTierChange, string, error) {
	if row.ChargeRef == "" {
		ret, cancel := urls(row.ID)
		po, err := p.Client.CreateOrder(ctx, CreateOrder{OrderID: tierUpPrefix + row.ID, Number: "upgrade-" + row.ID, Amount: row.Charge,
			Currency: row.Currency, ReturnURL: ret, CancelURL: cancel, Description: "Membership upgrade: the rest of the period",
			RequestID: "marquee-tierup-" + row.ID})
		if err != nil {
			return nil, "", payments.ProviderError("paypal", err)
		}
		if err := p.Store.SetPayPalChangeCharge(ctx, row.ID, po.ID); err != nil {
			return nil, "", err
		}
		if row, err = p.Store.PayPalTierChangeByID(ctx, row.ID); err != nil {
			return nil, "", err
		}
	}
	po, err := p.Client.GetOrder(ctx, row.ChargeRef)
	if err != nil {
		return nil, "", payments.ProviderError("paypal", err)
	}
	switch po.Status {
	case "CREATED", "PAYER_ACTION_REQUIRED":
		if po.ApprovalURL() == "" {
			return nil, "", payments.ErrNoApprovalURL
		}
		return row, po.ApprovalURL(), nil
	case "APPROVED":
		if po, err = p.Client.CaptureOrder(ctx, po.ID, "marquee-tierup-capture-"+row.ID); err != nil {
			var apiErr *APIError
			if errors.As(err, &apiErr) && apiErr.Status == http.StatusUnprocessableEntity {
				return nil, "", payments.Declined("PayPal declined the upgrade's payment: " + apiErr.Message)
			}
			return nil, "", payments.ProviderError("paypal", err)
		}
	}
	return p.upgradeCaptured(ctx, row, po)
}

// upgradeCaptured starts the upgrade from its captured PayPal order.
func (p *Provider) upgradeCaptured(ctx context.Context, row *store.PayPalTierChange, po *Order) (*store.PayPalTierChange, string, error) {
	if po.OrderRef() != tierUpPrefix+row.ID {
		return nil, "", payments.ErrNotThisOrder
	}
	for _, c := range po.Captures() {
		if c.Status != "COMPLETED" {
			continue
		}
		amount, err := Cents(c.Amount.Value)
		if err != nil {
			return nil, "", payments.ProviderError("paypal", err)
		}
		if amount != row.Charge {
			return nil, "", fmt.Errorf("paypal upgrade %s captured %d, not %d", row.ID, amount, row.Charge)
		}
		out, err := p.Store.PayPalUpgradePaid(ctx, row.ID, c.ID, amount, c.Amount.CurrencyCode, time.Now())
		if err != nil {
			return nil, "", err
		}
		if fee := c.Fee(); fee != nil {
			if cents, err := Cents(fee.Value); err == nil {
				if err := p.Store.BookProcessorFee(ctx, store.ProcessorFee{AppID: row.AppID, Ref: "paypal-upgrade:" + row.ID,
					Amount: cents, Currency: fee.CurrencyCode, Memo: "PayPal membership upgrade"}); err != nil {
					p.log().Error("paypal fee not booked", "change", row.ID, "err", err)
				}
			}
		}
		return out, "", nil
	}
	if po.Status == "COMPLETED" {
		return nil, "", payments.Declined("PayPal declined the upgrade's payment.")
	}
	return row, "", nil // pending at PayPal: its webhook finishes it
}

// subscriptionUpdated applies BILLING.SUBSCRIPTION.UPDATED: a revision
// the member approved (who may never come back from PayPal).
func (p *Provider) subscriptionUpdated(ctx context.Context, s *Subscription) (*payments.Result, error) {
	open, err := p.Store.OpenPayPalTierChanges(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	status := store.OutcomeIgnored
	for _, row := range open {
		if row.Status != store.PayPalChangePending || row.PayPalPlanID != s.PlanID {
			continue
		}
		// PayPal says what it bills now: read it back, as the event may be
		// stale.
		cur, err := p.Client.GetSubscription(ctx, s.ID)
		if err != nil {
			return nil, payments.ProviderError("paypal", err)
		}
		if cur.PlanID != row.PayPalPlanID {
			continue
		}
		if _, err := p.Store.ConfirmPayPalRevision(ctx, row.ID, time.Now()); err != nil {
			return nil, err
		}
		status = store.OutcomeTierChanged
	}
	return &payments.Result{Ref: s.ID, Status: status}, nil
}

// tierUpWebhook finishes an upgrade's difference from its PayPal order's
// events (the member approved but never came back).
func (p *Provider) tierUpWebhook(ctx context.Context, changeID, paypalOrderID string) (*payments.Result, error) {
	row, err := p.Store.PayPalTierChangeByID(ctx, changeID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.ChargeRef != paypalOrderID) {
		return &payments.Result{Ref: paypalOrderID, Status: store.OutcomeIgnored}, nil
	}
	if err != nil {
		return nil, err
	}
	if row.Status != store.PayPalChangeRevised {
		return &payments.Result{Ref: paypalOrderID, Status: store.OutcomeAlready}, nil
	}
	out, _, err := p.chargeUpgrade(ctx, row, func(string) (string, string) { return "", "" })
	if err != nil {
		return nil, err
	}
	return &payments.Result{Ref: paypalOrderID, Status: out.Status}, nil
}
