package store

import (
	"context"
	"fmt"
	"time"
)

// Recurring is the app's membership income as it stands (issue 40 item 6):
// monthly recurring revenue and members by tier, from the memberships that
// give access now (validSubscription). MRR counts what paying members pay
// a month: a monthly membership its amount, a yearly one its amount over
// twelve (summed per tier before dividing, so cents are lost only once per
// tier, rounding down); gifts count as members but pay nothing.
type Recurring struct {
	MRR    int64         `json:"mrr"`
	Paid   int           `json:"paid"`
	Gifted int           `json:"gifted"`
	Tiers  []TierMembers `json:"tiers"`
}

// TierMembers is one tier's members and monthly revenue.
type TierMembers struct {
	TierID string `json:"tierId"`
	Name   string `json:"name"`
	Paid   int    `json:"paid"`
	Gifted int    `json:"gifted"`
	MRR    int64  `json:"mrr"`
}

func (s *Storage) recurring(ctx context.Context, appID string, now time.Time) (Recurring, error) {
	out := Recurring{Tiers: []TierMembers{}}
	tiers, err := s.GiftableTiers(ctx, appID)
	if err != nil {
		return out, err
	}
	index := map[string]int{}
	for _, t := range tiers {
		index[t.ID] = len(out.Tiers)
		out.Tiers = append(out.Tiers, TierMembers{TierID: t.ID, Name: t.Name})
	}
	var subs []struct {
		PlanID   string `bun:"plan_id"`
		Amount   int64  `bun:"amount"`
		Provider string `bun:"provider"`
		Cycle    string `bun:"billing_cycle"`
	}
	q := s.DB.NewSelect().TableExpr("subscriptions AS s").Join("JOIN subscription_plans AS p ON p.id = s.plan_id").
		ColumnExpr("s.plan_id, s.amount, s.provider, COALESCE(NULLIF(s.cycle, ''), p.billing_cycle) AS billing_cycle").
		Where("s.app_id = ?", appID)
	if err := validSubscription(q, now, s.GracePeriod()).Scan(ctx, &subs); err != nil {
		return out, fmt.Errorf("load recurring memberships: %w", err)
	}
	yearly := map[string]int64{}
	for _, sub := range subs {
		i, ok := index[sub.PlanID]
		if !ok {
			// A tier deleted or back to draft with members left: still counted.
			index[sub.PlanID] = len(out.Tiers)
			i = len(out.Tiers)
			out.Tiers = append(out.Tiers, TierMembers{TierID: sub.PlanID, Name: "Former tier"})
		}
		t := &out.Tiers[i]
		if sub.Provider == CompProvider || sub.Amount <= 0 {
			t.Gifted++
			out.Gifted++
			continue
		}
		t.Paid++
		out.Paid++
		if sub.Cycle == CycleYearly {
			yearly[sub.PlanID] += sub.Amount
		} else {
			t.MRR += sub.Amount
		}
	}
	for id, cents := range yearly {
		out.Tiers[index[id]].MRR += cents / 12
	}
	for _, t := range out.Tiers {
		out.MRR += t.MRR
	}
	return out, nil
}
