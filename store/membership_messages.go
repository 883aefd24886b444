package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// What happened to a membership (membershipMessages).
const (
	MembershipStarted = "started"
	MembershipRenewed = "renewed"
	MembershipFailed  = "failed"
	MembershipEnded   = "ended"
	// MembershipGiven: the creator gave the member a tier (complimentary).
	MembershipGiven = "given"
	// MembershipTrial: a free trial started; MembershipTrialEnding: it
	// ends within three days (trials.go).
	MembershipTrial       = "trial"
	MembershipTrialEnding = "trial_ending"
	// MembershipChanged: the member moved to another tier (tier_change.go).
	MembershipChanged = "changed"
)

// membershipNote is one membership event to tell: the membership after the
// change, and for a failed renewal the end of its grace and whether a card
// (rather than the wallet) failed; Reason says why one ended.
type membershipNote struct {
	Event  string
	Sub    *Subscription
	Card   bool
	Reason string
	// Change is the tier change a MembershipChanged note tells, made at Now.
	Change *TierChange
	Now    time.Time
}

// membershipMessages tells the member (and, for a new membership, the
// app's creator and admins) what happened to a membership, in the app and
// by e-mail, in the transaction that changed it, as orderMessages does for
// orders: the in-app notice honours the member's mute switches, the mail
// their e-mail switches (receipts and a failed payment are transactional,
// so they always come). Each message's key names the membership, the event
// and the period's end (to the nanosecond: a membership started again
// within the same second is another start), so a change reported twice
// tells once.
func membershipMessages(ctx context.Context, tx bun.IDB, n membershipNote) error {
	sub := n.Sub
	memberChanged(ctx, sub.AppID, sub.UserID)
	var a App
	if err := tx.NewSelect().Model(&a).Column("name", "settings").Where("id = ?", sub.AppID).Scan(ctx); err != nil {
		return fmt.Errorf("membership message: load app: %w", err)
	}
	app := struct{ Name, DisplayName string }{a.Name, a.Settings.Basic.DisplayName}
	if app.DisplayName == "" {
		app.DisplayName = strings.ToUpper(a.Name) // as the mails' brand (MailBrandOf)
	}
	var plan string
	_ = tx.NewSelect().TableExpr("subscription_plans AS p").Join("JOIN store_items AS i ON i.id = p.store_item_id").
		ColumnExpr("i.name").Where("p.id = ?", sub.PlanID).Limit(1).Scan(ctx, &plan)
	if plan == "" {
		plan = "Membership"
	}
	key := "membership:" + sub.ID + ":" + n.Event + ":" + strconv.FormatInt(sub.CurrentPeriodEnd.UnixNano(), 10)
	if n.Change != nil {
		// One tier may be chosen, left and chosen again within a period.
		key += ":" + n.Change.To.ID + ":" + strconv.FormatInt(n.Now.UnixNano(), 10)
	}
	day := func(t time.Time) string { return t.UTC().Format("Jan 2, 2006") }
	amount := Money(sub.Amount, sub.Currency)
	fix := &MailLink{Label: "Open your membership", Path: "/apps/" + app.Name + "/profile"}
	var text string
	mail := MailContent{Action: fix}
	transactional := true
	switch n.Event {
	case MembershipStarted:
		text = "Welcome! Your " + plan + " membership of " + app.DisplayName + " is active until " + day(sub.CurrentPeriodEnd) + "."
		mail.Subject, mail.Heading = "Your membership of "+app.DisplayName, "Welcome, member"
		mail.Rows = []MailRow{{Label: "Plan", Value: plan}, {Label: "Paid", Value: amount, Strong: true},
			{Label: "Active until", Value: day(sub.CurrentPeriodEnd)}}
	case MembershipRenewed:
		text = "Your " + plan + " membership was renewed: " + amount + ", active until " + day(sub.CurrentPeriodEnd) + "."
		mail.Subject, mail.Heading = "Your membership was renewed", "Membership renewed"
		mail.Rows = []MailRow{{Label: "Plan", Value: plan}, {Label: "Paid", Value: amount, Strong: true},
			{Label: "Active until", Value: day(sub.CurrentPeriodEnd)}}
	case MembershipFailed:
		grace := sub.CurrentPeriodEnd
		if sub.GraceUntil != nil {
			grace = *sub.GraceUntil
		}
		if n.Card {
			text = "Your membership renewal failed: please update your card before " + day(grace) + " to keep access."
		} else {
			text = "Your membership renewal failed: your wallet balance is too low. Top up before " + day(grace) + " to keep access."
		}
		mail.Subject, mail.Heading = "Your membership payment failed", "Your renewal did not go through"
		mail.Rows = []MailRow{{Label: "Plan", Value: plan}, {Label: "Due", Value: amount},
			{Label: "Access until", Value: day(grace), Strong: true}}
		fix.Label = "Fix your payment"
	case MembershipGiven:
		until := "until " + day(sub.CurrentPeriodEnd)
		if sub.CurrentPeriodEnd.After(time.Now().AddDate(50, 0, 0)) {
			until = "for good"
		}
		text = app.DisplayName + " gave you a " + plan + " membership, " + until + ". No payment is taken."
		mail.Subject, mail.Heading = "A membership of "+app.DisplayName+" for you", "Welcome, member"
		mail.Rows = []MailRow{{Label: "Plan", Value: plan}, {Label: "Paid", Value: "Nothing: it is a gift", Strong: true},
			{Label: "Active", Value: until}}
	case MembershipTrial:
		text = "Your free trial of " + plan + " in " + app.DisplayName + " has started. It ends on " + day(sub.CurrentPeriodEnd) +
			"; then " + amount + " is taken from your wallet unless you cancel."
		if sub.Provider == "stripe" {
			text = "Your free trial of " + plan + " in " + app.DisplayName + " has started. It ends on " + day(sub.CurrentPeriodEnd) +
				"; then your card is charged " + amount + " unless you cancel."
		}
		mail.Subject, mail.Heading = "Your free trial of "+app.DisplayName, "Welcome, member"
		mail.Rows = []MailRow{{Label: "Plan", Value: plan}, {Label: "Paid", Value: "Nothing during the trial", Strong: true},
			{Label: "Trial ends", Value: day(sub.CurrentPeriodEnd)}, {Label: "Then", Value: amount}}
	case MembershipTrialEnding:
		text = "Your free trial of " + plan + " in " + app.DisplayName + " ends on " + day(sub.CurrentPeriodEnd) +
			". Then " + amount + " is taken from your wallet; without it you follow the app again. Cancel before then to pay nothing."
		if sub.Provider == "stripe" {
			text = "Your free trial of " + plan + " in " + app.DisplayName + " ends on " + day(sub.CurrentPeriodEnd) +
				". Then your card is charged " + amount + "; if it cannot be, you follow the app again. Cancel before then to pay nothing."
		}
		mail.Subject, mail.Heading = "Your free trial ends in 3 days", "Your free trial ends soon"
		mail.Rows = []MailRow{{Label: "Plan", Value: plan}, {Label: "Trial ends", Value: day(sub.CurrentPeriodEnd), Strong: true},
			{Label: "Then", Value: amount}}
		fix.Label = "Manage your membership"
	case MembershipChanged:
		ch := n.Change
		if ch.Direction == TierUpgrade {
			text = "You moved up to " + ch.To.Name + " in " + app.DisplayName + "."
			if ch.Charge > 0 {
				text += " You paid " + Money(ch.Charge, ch.Currency) + " for the rest of this period;"
			}
			text += " it renews at " + Money(ch.Price, ch.Currency) + " on " + day(sub.CurrentPeriodEnd) + "."
			mail.Subject, mail.Heading = "You moved up to "+ch.To.Name, "Tier changed"
			mail.Rows = []MailRow{{Label: "Tier", Value: ch.To.Name}, {Label: "Paid now", Value: Money(ch.Charge, ch.Currency), Strong: true},
				{Label: "Renews at", Value: Money(ch.Price, ch.Currency) + " on " + day(sub.CurrentPeriodEnd)}}
		} else {
			text = "Your membership of " + app.DisplayName + " moves to " + ch.To.Name + " on " + day(sub.CurrentPeriodEnd) +
				"; you keep " + ch.From.Name + " until then."
			mail.Subject, mail.Heading = "Your tier changes on "+day(sub.CurrentPeriodEnd), "Tier change scheduled"
			mail.Rows = []MailRow{{Label: "Now", Value: ch.From.Name}, {Label: "From " + day(sub.CurrentPeriodEnd), Value: ch.To.Name},
				{Label: "Then renews at", Value: Money(ch.Price, ch.Currency), Strong: true}}
		}
	case MembershipEnded:
		text = "Your " + plan + " membership of " + app.DisplayName + " has ended."
		if n.Reason != "" {
			text += " " + n.Reason
		}
		mail.Subject, mail.Heading = "Your membership has ended", "Your membership has ended"
		fix.Label = "Subscribe again"
		transactional = false
	default:
		return fmt.Errorf("membership message: unknown event %q", n.Event)
	}
	mail.Paragraphs = []string{text}
	if _, err := Notify(ctx, tx, Notice{AppID: sub.AppID, Kind: KindMembershipLapsing, RecipientIDs: []string{sub.UserID},
		Text: text, Link: "/profile", Source: key}); err != nil {
		return err
	}
	if _, err := MailMember(ctx, tx, OutgoingMail{Key: key, Kind: KindMembershipLapsing, AppID: sub.AppID, UserID: sub.UserID,
		Transactional: transactional, Content: mail}); err != nil {
		return err
	}
	if n.Event == MembershipStarted {
		return staffNewMember(ctx, tx, sub, app.Name, plan, amount)
	}
	return nil
}

// staffNewMember tells the creator and admins of a new paying member.
func staffNewMember(ctx context.Context, tx bun.IDB, sub *Subscription, appName, plan, amount string) error {
	var member string
	_ = tx.NewSelect().Table("users").Column("username").Where("id = ?", sub.UserID).Scan(ctx, &member)
	text := "New member: @" + member + " joined " + plan + " (" + amount + ")."
	staff, err := staffOf(ctx, tx, sub.AppID)
	if err != nil {
		return err
	}
	if _, err := Notify(ctx, tx, Notice{AppID: sub.AppID, Kind: KindNewMember, RecipientIDs: staff, SenderID: sub.UserID, Text: text,
		Link: "/studio/members"}); err != nil {
		return err
	}
	for _, uid := range staff {
		if uid == sub.UserID {
			continue
		}
		if _, err := MailMember(ctx, tx, OutgoingMail{Key: "membership:" + sub.ID + ":started:" + strconv.FormatInt(sub.CurrentPeriodEnd.UnixNano(), 10) + ":staff:" + uid,
			Kind: KindNewMember, AppID: sub.AppID, UserID: uid,
			Content: MailContent{Subject: "New member: @" + member, Heading: "You have a new member", Paragraphs: []string{text},
				Action: &MailLink{Label: "See your members", Path: "/apps/" + appName + "/studio/members"}}}); err != nil {
			return err
		}
	}
	return nil
}
