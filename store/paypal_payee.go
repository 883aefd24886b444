package store

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// PayPalPayee is the PayPal account an app's PayPal orders pay (issue 24):
// PayPal's merchant id (preferred) or the account's e-mail. An app without
// one is paid into the operator's account, as before.
type PayPalPayee struct {
	bun.BaseModel `bun:"table:app_paypal_payees"`

	AppID      string    `bun:",pk" json:"-"`
	MerchantID string    `bun:",notnull,default:''" json:"merchantId"`
	Email      string    `bun:",notnull,default:''" json:"email"`
	UpdatedAt  time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

// Set reports whether the payee names an account.
func (p *PayPalPayee) Set() bool { return p != nil && (p.MerchantID != "" || p.Email != "") }

// Name is how the payee is shown and recorded: the merchant id, else the
// e-mail.
func (p *PayPalPayee) Name() string {
	if p.MerchantID != "" {
		return p.MerchantID
	}
	return p.Email
}

// payeeName says where PayPal orders are paid, for the audit log and mail.
func payeeName(p *PayPalPayee) string {
	if !p.Set() {
		return "the site's own PayPal account"
	}
	return "the PayPal account " + strings.TrimSpace(p.MerchantID+" "+p.Email)
}

// PlatformFeeOwed is a platform fee a creator owes the operator: an order
// paid to the creator's own PayPal account whose fee PayPal could not take
// (the operator is not allowed platform fees, PAYPAL_PLATFORM_FEES=false).
// One per provider payment.
type PlatformFeeOwed struct {
	bun.BaseModel `bun:"table:platform_fees_owed"`

	ID         string    `bun:",pk" json:"id"`
	AppID      string    `bun:",notnull" json:"appId"`
	OrderID    string    `bun:",notnull" json:"orderId"`
	Provider   string    `bun:",notnull" json:"provider"`
	PaymentRef string    `bun:",notnull" json:"paymentRef"`
	Payee      string    `bun:",notnull,default:''" json:"payee"`
	Gross      int64     `bun:",notnull" json:"gross"`
	Amount     int64     `bun:",notnull" json:"amount"`
	Currency   string    `bun:",notnull,default:'USD'" json:"currency"`
	CreatedAt  time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// PayPal merchant ids ("payer ids") are 13 upper-case letters and digits;
// a little more room is left in case PayPal lengthens them.
var merchantIDPattern = regexp.MustCompile(`^[2-9A-HJ-NP-Z]{13}$`)

// PayPalPayeeOf answers the app's payee, nil when none is set.
func (s *Storage) PayPalPayeeOf(ctx context.Context, appID string) (*PayPalPayee, error) {
	p := new(PayPalPayee)
	err := selectOne(ctx, s.db.NewSelect().Model(p).Where("app_id = ?", appID), "paypal payee")
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !p.Set() {
		return nil, nil
	}
	return p, nil
}

// SetPayPalPayee sets (or, both empty, clears) the app's PayPal payee, as
// actorID (the creator: the server refuses anyone else). The merchant id
// must look like PayPal's; the e-mail must be an address. A change is
// written to the audit log and mailed to the creator in the same
// transaction (payoutChanged).
func (s *Storage) SetPayPalPayee(ctx context.Context, appID, actorID, merchantID, email string) (*PayPalPayee, error) {
	merchantID = strings.ToUpper(strings.TrimSpace(merchantID))
	email = strings.TrimSpace(email)
	if merchantID != "" && !merchantIDPattern.MatchString(merchantID) {
		return nil, &ErrInvalid{Msg: "A PayPal merchant ID is 13 letters and digits (PayPal shows it under Account settings)", Field: "merchantId"}
	}
	if email != "" {
		a, err := mail.ParseAddress(email)
		if err != nil || a.Address != email || len(email) > 254 {
			return nil, &ErrInvalid{Msg: "Enter the e-mail address of the PayPal account", Field: "email"}
		}
	}
	p := &PayPalPayee{AppID: appID, MerchantID: merchantID, Email: email, UpdatedAt: time.Now().UTC()}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		old := new(PayPalPayee)
		if err := selectOne(ctx, tx.NewSelect().Model(old).Where("app_id = ?", appID), "paypal payee"); errors.Is(err, ErrNotFound) {
			old = nil
		} else if err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(p).On("CONFLICT (app_id) DO UPDATE").
			Set("merchant_id = EXCLUDED.merchant_id").Set("email = EXCLUDED.email").Set("updated_at = EXCLUDED.updated_at").Exec(ctx); err != nil {
			return fmt.Errorf("set paypal payee: %w", err)
		}
		if payeeName(old) == payeeName(p) {
			return nil
		}
		return payoutChanged(ctx, tx, appID, actorID, "paypal.payee",
			"PayPal orders are now paid to "+payeeName(p)+" (before: "+payeeName(old)+").")
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// RecordFeeOwed records that the app owes fee.Amount for a payment; a
// second record of the same payment changes nothing.
func (s *Storage) RecordFeeOwed(ctx context.Context, fee *PlatformFeeOwed) error {
	if fee.ID == "" {
		fee.ID = NewID()
	}
	if fee.CreatedAt.IsZero() {
		fee.CreatedAt = time.Now().UTC()
	}
	if _, err := s.db.NewInsert().Model(fee).On("CONFLICT (provider, payment_ref) DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("record platform fee owed: %w", err)
	}
	return nil
}

// FeesOwed lists what the app owes the operator, newest first, and the sum.
func (s *Storage) FeesOwed(ctx context.Context, appID string, limit int) ([]PlatformFeeOwed, int64, error) {
	out := []PlatformFeeOwed{}
	if err := s.db.NewSelect().Model(&out).Where("app_id = ?", appID).Order("created_at DESC", "id DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, 0, fmt.Errorf("list platform fees owed: %w", err)
	}
	var total int64
	if err := s.db.NewSelect().Model((*PlatformFeeOwed)(nil)).ColumnExpr("COALESCE(SUM(amount), 0)").Where("app_id = ?", appID).Scan(ctx, &total); err != nil {
		return nil, 0, fmt.Errorf("sum platform fees owed: %w", err)
	}
	return out, total, nil
}
