package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// donationMessages, in the transaction that marks a donation paid: the
// donor's receipt (in the app and by e-mail) and the creator's and admins'
// notice of a new donation.
func donationMessages(ctx context.Context, tx bun.IDB, d *Donation) error {
	var app, donor string
	if err := tx.NewSelect().Table("apps").Column("name").Where("id = ?", d.AppID).Scan(ctx, &app); err != nil {
		return fmt.Errorf("donation message: load app: %w", err)
	}
	_ = tx.NewSelect().Table("users").Column("username").Where("id = ?", d.UserID).Scan(ctx, &donor)
	amount := Money(d.Amount, d.Currency)
	text := "Thank you for your donation of " + amount + "!"
	if _, err := Notify(ctx, tx, Notice{AppID: d.AppID, Kind: KindDonation, RecipientIDs: []string{d.UserID}, Text: text, Link: "/profile"}); err != nil {
		return err
	}
	rows := []MailRow{{Label: "Donation", Value: amount, Strong: true}}
	if d.Message != "" {
		rows = append(rows, MailRow{Label: "Your message", Value: d.Message})
	}
	if _, err := MailMember(ctx, tx, OutgoingMail{Key: "donation:" + d.ID, Kind: KindDonation, AppID: d.AppID, UserID: d.UserID,
		Transactional: true, Content: MailContent{Subject: "Your donation receipt", Heading: "Thank you for your support",
			Paragraphs: []string{text}, Rows: rows, Action: &MailLink{Label: "Open the app", Path: "/apps/" + app}}}); err != nil {
		return err
	}
	staffText := "New donation from @" + donor + ": " + amount + "."
	staff, err := staffOf(ctx, tx, d.AppID)
	if err != nil {
		return err
	}
	if _, err := Notify(ctx, tx, Notice{AppID: d.AppID, Kind: KindDonation, RecipientIDs: staff, SenderID: d.UserID, Text: staffText,
		Link: "/donations"}); err != nil {
		return err
	}
	for _, uid := range staff {
		if uid == d.UserID {
			continue
		}
		if _, err := MailMember(ctx, tx, OutgoingMail{Key: "donation:" + d.ID + ":staff:" + uid, Kind: KindDonation, AppID: d.AppID, UserID: uid,
			Content: MailContent{Subject: "New donation: " + amount, Heading: "New donation", Paragraphs: []string{staffText},
				Action: &MailLink{Label: "See donations", Path: "/apps/" + app + "/donations"}}}); err != nil {
			return err
		}
	}
	return nil
}
