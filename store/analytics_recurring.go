package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/uptrace/bun"
)

// Recurring is the app's membership income as it stands (issue 40 item 6):
// monthly recurring revenue and members by tier, from the memberships that
// give access now (validSubscription). MRR counts what paying members pay
// a month: a monthly membership its amount, a yearly one its amount over
// twelve (summed per tier before dividing, so cents are lost only once per
// tier, rounding down); gifts count as members but pay nothing.
type Recurring struct {
	MRR    int64 `json:"mrr"`
	Paid   int   `json:"paid"`
	Gifted int   `json:"gifted"`
	// Trialing counts members in a free trial: members who pay nothing
	// yet (neither paid nor in the MRR).
	Trialing int           `json:"trialing"`
	Tiers    []TierMembers `json:"tiers"`
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
		Trial    bool   `bun:"trial"`
	}
	q := s.db.NewSelect().TableExpr("subscriptions AS s").Join("JOIN subscription_plans AS p ON p.id = s.plan_id").
		ColumnExpr("s.plan_id, s.amount, s.provider, COALESCE(NULLIF(s.cycle, ''), p.billing_cycle) AS billing_cycle, s.trial_until IS NOT NULL AS trial").
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
		if sub.Trial {
			out.Trialing++
			continue
		}
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

// TrialsAndOffers is what free trials and offer codes did over the
// analytics range (issue 40 item 6): trials started, converted (their
// first period paid) and ended unpaid in the range; redemptions of each
// code made in the range, with the discount they gave on their first
// payment.
type TrialsAndOffers struct {
	TrialsStarted   int `json:"trialsStarted"`
	TrialsConverted int `json:"trialsConverted"`
	TrialsEnded     int `json:"trialsEnded"`
	// Redemptions is the range's total; ByCode each code's, most first.
	Redemptions int          `json:"redemptions"`
	ByCode      []CodeRedeem `json:"byCode"`
}

// CodeRedeem is one code's redemptions in the range.
type CodeRedeem struct {
	Code        string `json:"code"`
	Redemptions int    `json:"redemptions"`
	Discount    int64  `json:"discount"`
}

func (s *Storage) trialsAndOffers(ctx context.Context, appID string, r AnalyticsRange) (TrialsAndOffers, error) {
	out := TrialsAndOffers{ByCode: []CodeRedeem{}}
	count := func(col string, into *int) error {
		n, err := s.db.NewSelect().Model((*Trial)(nil)).Where("app_id = ?", appID).
			Where("? >= ? AND ? < ?", bun.Ident(col), r.From, bun.Ident(col), r.To).Count(ctx)
		*into = int(n)
		return err
	}
	for _, c := range []struct {
		col  string
		into *int
	}{{"started_at", &out.TrialsStarted}, {"converted_at", &out.TrialsConverted}, {"ended_at", &out.TrialsEnded}} {
		if err := count(c.col, c.into); err != nil {
			return out, fmt.Errorf("count trials: %w", err)
		}
	}
	if err := s.db.NewSelect().TableExpr("offer_redemptions AS r").Join("JOIN offers AS o ON o.id = r.offer_id").
		ColumnExpr("o.code, COUNT(*) AS redemptions, COALESCE(SUM(r.discount), 0) AS discount").
		Where("r.app_id = ? AND r.created_at >= ? AND r.created_at < ?", appID, r.From, r.To).
		GroupExpr("o.code").OrderExpr("redemptions DESC, o.code ASC").Scan(ctx, &out.ByCode); err != nil {
		return out, fmt.Errorf("count redemptions: %w", err)
	}
	for _, c := range out.ByCode {
		out.Redemptions += c.Redemptions
	}
	return out, nil
}

// PaidMonth is one calendar month (UTC) of paid memberships, from the role
// history (role_changes.tier_id, the tier each line says the member pays
// for): Paid and ByTier count the members paying at the month's end (for
// the current month: now); AtStart those paying at its start; Left those
// of AtStart who stopped paying during the month (to no tier: back to
// follower, a gift, gone; a move between paid tiers is no leaving, and one
// who left and came back in the month still left once); Churn is Left over
// AtStart (0 when nobody paid at the start).
type PaidMonth struct {
	Month   string      `json:"month"`
	Paid    int         `json:"paid"`
	ByTier  []TierCount `json:"byTier"`
	AtStart int         `json:"atStart"`
	Left    int         `json:"left"`
	Churn   float64     `json:"churn"`
}

// TierCount is one tier's paying members.
type TierCount struct {
	TierID string `json:"tierId"`
	Name   string `json:"name"`
	Paid   int    `json:"paid"`
}

// PaidMonths is how many months the paid history goes back (this one
// included).
const PaidMonths = 12

// paidHistory answers the last PaidMonths calendar months up to now's,
// oldest first.
func (s *Storage) paidHistory(ctx context.Context, appID string, now time.Time) ([]PaidMonth, error) {
	now = now.UTC()
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1-PaidMonths, 0)
	var lines []struct {
		UserID    string    `bun:"user_id"`
		TierID    string    `bun:"tier_id"`
		CreatedAt time.Time `bun:"created_at"`
	}
	if err := s.db.NewSelect().Table("role_changes").Column("user_id", "tier_id", "created_at").
		Where("app_id = ? AND created_at <= ?", appID, now).OrderExpr("created_at ASC, id ASC").Scan(ctx, &lines); err != nil {
		return nil, fmt.Errorf("load role history: %w", err)
	}
	tiers, err := s.GiftableTiers(ctx, appID)
	if err != nil {
		return nil, err
	}
	names, order := map[string]string{}, []string{}
	for _, t := range tiers {
		names[t.ID] = t.Name
		order = append(order, t.ID)
	}
	tierOf := map[string]string{} // member: the tier paid for as of the lines read
	snapshot := func() (int, map[string]int) {
		by := map[string]int{}
		n := 0
		for _, t := range tierOf {
			if t != "" {
				by[t]++
				n++
			}
		}
		return n, by
	}
	out := make([]PaidMonth, 0, PaidMonths)
	i := 0
	for m := 0; m < PaidMonths; m++ {
		start := first.AddDate(0, m, 0)
		end := start.AddDate(0, 1, 0)
		for ; i < len(lines) && lines[i].CreatedAt.Before(start); i++ {
			tierOf[lines[i].UserID] = lines[i].TierID
		}
		row := PaidMonth{Month: start.Format("2006-01"), ByTier: []TierCount{}}
		payingAtStart := map[string]bool{}
		for u, t := range tierOf {
			if t != "" {
				payingAtStart[u] = true
			}
		}
		row.AtStart = len(payingAtStart)
		left := map[string]bool{}
		for ; i < len(lines) && lines[i].CreatedAt.Before(end); i++ {
			l := lines[i]
			if l.TierID == "" && payingAtStart[l.UserID] && tierOf[l.UserID] != "" {
				left[l.UserID] = true
			}
			tierOf[l.UserID] = l.TierID
		}
		row.Left = len(left)
		if row.AtStart > 0 {
			row.Churn = float64(row.Left) / float64(row.AtStart)
		}
		var by map[string]int
		row.Paid, by = snapshot()
		for _, id := range order {
			row.ByTier = append(row.ByTier, TierCount{TierID: id, Name: names[id], Paid: by[id]})
			delete(by, id)
		}
		former := make([]string, 0, len(by)) // tiers no longer listed, with members left
		for id := range by {
			former = append(former, id)
		}
		sort.Strings(former)
		for _, id := range former {
			row.ByTier = append(row.ByTier, TierCount{TierID: id, Name: "Former tier", Paid: by[id]})
		}
		out = append(out, row)
	}
	return out, nil
}
