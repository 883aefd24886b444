package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

type Donation struct {
	bun.BaseModel `bun:"table:donations"`

	ID          string     `bun:",pk" json:"id"`
	AppID       string     `bun:",notnull" json:"appId"`
	UserID      string     `bun:",notnull" json:"-"`
	Amount      int64      `bun:",notnull" json:"amount"`
	Currency    string     `bun:",notnull,default:'USD'" json:"currency"`
	Message     string     `bun:",notnull,default:''" json:"message"`
	Status      string     `bun:",notnull,default:'PENDING'" json:"status"`
	CreatedAt   time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	ProcessedAt *time.Time `json:"processedAt"`
	// PaymentMethod and PaymentRef: how the donation was paid (migration
	// 20261123120001); empty until it is.
	PaymentMethod string `bun:",notnull,default:''" json:"paymentMethod"`
	PaymentRef    string `bun:",notnull,default:''" json:"-"`
}

type DonationTier struct {
	bun.BaseModel `bun:"table:donation_tiers"`

	ID             string `bun:",pk" json:"id"`
	AppID          string `bun:",notnull" json:"-"`
	Name           string `bun:",notnull" json:"name"`
	RequiredAmount int64  `bun:",notnull" json:"requiredAmount"`
	Description    string `bun:",notnull,default:''" json:"description"`
	Position       int    `bun:",notnull,default:0" json:"-"`
}

const (
	DonationPending = "PENDING"
	DonationPaid    = "PAID"

	// MaxDonation keeps a typo (an extra zero or five) from emptying a
	// wallet: $10,000 in cents.
	MaxDonation        = 1_000_000
	MaxDonationMessage = 500
	DonationCurrency   = "USD"

	TransferDonation = "DONATION"
)

// NewDonation is what POST /api/donations/create sends (SPEC.md section 7).
type NewDonation struct {
	AppID, UserID     string
	Amount            int64
	Currency, Message string
}

// CreateDonation records a PENDING donation. It counts for nothing (no
// total, no tier) until it is paid.
func (s *Storage) CreateDonation(ctx context.Context, in NewDonation) (*Donation, error) {
	if in.Amount <= 0 {
		return nil, invalid("Amount must be above 0")
	}
	if in.Amount > MaxDonation {
		return nil, invalid("Amount must be at most $10,000")
	}
	if in.Currency == "" {
		in.Currency = DonationCurrency
	}
	if strings.ToUpper(in.Currency) != DonationCurrency {
		return nil, invalid("Donations are in USD only")
	}
	in.Message = strings.TrimSpace(in.Message)
	if utf8.RuneCountInString(in.Message) > MaxDonationMessage {
		return nil, invalid(fmt.Sprintf("Message must be at most %d characters", MaxDonationMessage))
	}
	// A message may have lines; other control characters are refused.
	if !TextOnly(in.Message) {
		return nil, &ErrInvalid{Msg: "Message must not contain control characters", Field: "message"}
	}
	d := &Donation{ID: NewID(), AppID: in.AppID, UserID: in.UserID, Amount: in.Amount, Currency: DonationCurrency,
		Message: in.Message, Status: DonationPending, CreatedAt: time.Now().UTC()}
	if _, err := s.db.NewInsert().Model(d).Exec(ctx); err != nil {
		return nil, fmt.Errorf("create donation: %w", err)
	}
	return d, nil
}

// ErrDonationClosed: the donation is not waiting for payment.
var ErrDonationClosed = errors.New("donation is not pending")

// PayDonationFromWallet takes a PENDING donation's amount from the donor's
// wallet to the app's and marks it PAID, in one transaction. The ledger
// reference is the donation, so processing it twice (a double click, a
// retry) moves the money once and answers the paid donation.
func (s *Storage) PayDonationFromWallet(ctx context.Context, appID, userID, donationID string) (*Donation, error) {
	var out *Donation
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if tx.Dialect().Name() == dialect.SQLite {
			if _, err := tx.ExecContext(ctx, "UPDATE donations SET status = status WHERE 0"); err != nil {
				return fmt.Errorf("lock donation: %w", err)
			}
		}
		d := new(Donation)
		q := tx.NewSelect().Model(d).Where("id = ? AND app_id = ? AND user_id = ?", donationID, appID, userID)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := selectOne(ctx, q, "donation"); err != nil {
			return err
		}
		out = d
		if d.Status == DonationPaid {
			return nil
		}
		if d.Status != DonationPending {
			return ErrDonationClosed
		}
		t, _, err := TransferTx(ctx, tx, TransferInput{AppID: appID, Reference: "donation:" + d.ID, Kind: TransferDonation,
			From: Member(userID), To: AppRevenue, Amount: d.Amount, Memo: "Donation"})
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		res, err := tx.NewUpdate().Model((*Donation)(nil)).Set("status = ?", DonationPaid).Set("processed_at = ?", now).
			Set("payment_method = ?", WalletMethod).Set("payment_ref = ?", t.ID).
			Where("id = ? AND status = ?", d.ID, DonationPending).Exec(ctx)
		if err != nil {
			return fmt.Errorf("mark donation paid: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrDonationClosed
		}
		// A card payment started for it before must not take money too.
		if err := cancelOpenPayment(ctx, tx, CancelPaymentArgs{Provider: d.PaymentMethod, Ref: d.PaymentRef, DonationID: d.ID}); err != nil {
			return err
		}
		d.Status, d.ProcessedAt, d.PaymentMethod, d.PaymentRef = DonationPaid, &now, WalletMethod, t.ID
		if err := s.bookEarningTx(ctx, tx, Earning{AppID: appID, Ref: "donation:" + d.ID, Amount: d.Amount, InLedger: true,
			Currency: d.Currency, Memo: "Donation"}); err != nil {
			return err
		}
		return donationMessages(ctx, tx, d)
	})
	if err == nil {
		// The landing's recent posts carry donor badges.
		s.InvalidateLanding(ctx, appID)
	}
	return out, err
}

// AttachDonationPayment remembers the card payment (a PaymentIntent) started
// for a PENDING donation, so a later process call reuses it and a webhook
// that names it finds the donation. The first ref sticks: a concurrent
// start (which the provider's idempotency key makes the same intent)
// changes nothing.
func (s *Storage) AttachDonationPayment(ctx context.Context, donationID, method, ref string) error {
	res, err := s.db.NewUpdate().Model((*Donation)(nil)).Set("payment_method = ?", method).Set("payment_ref = ?", ref).
		Where("id = ? AND status = ? AND (payment_ref = '' OR payment_ref = ?)", donationID, DonationPending, ref).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("attach donation payment: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		d, err := s.DonationByID(ctx, donationID)
		if err != nil {
			return err
		}
		if d.Status != DonationPending {
			return ErrDonationClosed
		}
	}
	return nil
}

// ApplyDonationPaymentEvent records a card provider's event ev about a
// donation's payment and, only the first time its id is seen, marks the
// donation PAID when the payment is ref, for exactly its amount and
// currency, in the same transaction. A repeated delivery (or the browser's
// confirm after the webhook) changes nothing; a payment that arrives for a
// donation already paid another way is recorded as NOT_PAYABLE (it needs a
// refund), one of another amount as AMOUNT_MISMATCH.
func (s *Storage) ApplyDonationPaymentEvent(ctx context.Context, ev *PaymentEvent, donationID, method, ref string, amount int64, currency string) (*Donation, bool, error) {
	if ev.ID == "" {
		ev.ID = NewID()
	}
	d := new(Donation)
	fresh := false
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if fresh, err = recordPaymentEvent(ctx, tx, ev, true); err != nil {
			return err
		}
		q := tx.NewSelect().Model(d).Where("id = ?", donationID)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := selectOne(ctx, q, "donation"); err != nil {
			return err
		}
		if !fresh {
			return nil
		}
		switch {
		case d.Status == DonationPaid && d.PaymentRef == ref:
			ev.Outcome = OutcomeAlready
		case d.Status != DonationPending:
			ev.Outcome = OutcomeNotPayable
			if err := strayDonationPayment(ctx, tx, d, method, ref, amount, currency); err != nil {
				return err
			}
		case amount != d.Amount || !strings.EqualFold(currency, d.Currency):
			ev.Outcome = OutcomeMismatch
			if err := strayDonationPayment(ctx, tx, d, method, ref, amount, currency); err != nil {
				return err
			}
		default:
			now := time.Now().UTC()
			res, err := tx.NewUpdate().Model((*Donation)(nil)).Set("status = ?", DonationPaid).Set("processed_at = ?", now).
				Set("payment_method = ?", method).Set("payment_ref = ?", ref).
				Where("id = ? AND status = ?", d.ID, DonationPending).Exec(ctx)
			if err != nil {
				return fmt.Errorf("mark donation paid: %w", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return ErrDonationClosed
			}
			d.Status, d.ProcessedAt, d.PaymentMethod, d.PaymentRef = DonationPaid, &now, method, ref
			ev.Outcome = OutcomePaid
			if err := s.bookEarningTx(ctx, tx, Earning{AppID: d.AppID, Ref: "donation:" + d.ID, Amount: d.Amount,
				Currency: d.Currency, Memo: "Donation"}); err != nil {
				return err
			}
			if err := donationMessages(ctx, tx, d); err != nil {
				return err
			}
		}
		if _, err := tx.NewUpdate().Model((*PaymentEvent)(nil)).Set("outcome = ?", ev.Outcome).Set("app_id = ?", d.AppID).
			Where("id = ?", ev.ID).Exec(ctx); err != nil {
			return fmt.Errorf("record payment event outcome: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if fresh && ev.Outcome == OutcomePaid {
		// The landing's recent posts carry donor badges.
		s.InvalidateLanding(ctx, d.AppID)
	}
	return d, fresh, nil
}

// strayDonationPayment refunds a card payment donation d cannot take (it was
// paid another way first, or the amount is not its own) and tells the donor.
func strayDonationPayment(ctx context.Context, tx bun.Tx, d *Donation, method, ref string, amount int64, currency string) error {
	why := "after the donation was already paid"
	if d.Status == DonationPending {
		why = "that is not the donation's amount"
	}
	return refundStray(ctx, tx, StrayPayment{Provider: method, Ref: ref, DonationID: d.ID, Amount: amount, Currency: currency},
		Notice{AppID: d.AppID, Kind: KindSystem, RecipientIDs: []string{d.UserID},
			Text: fmt.Sprintf("A payment of %s for your donation arrived %s. It is being refunded to you in full.",
				Money(amount, strings.ToUpper(currency)), why),
			Link: "/donate"})
}

// DonationTiers are the app's Achievement Tiers, lowest first.
func (s *Storage) DonationTiers(ctx context.Context, appID string) ([]DonationTier, error) {
	tiers := []DonationTier{}
	if err := s.db.NewSelect().Model(&tiers).Where("app_id = ?", appID).
		Order("required_amount ASC", "position ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load donation tiers: %w", err)
	}
	return tiers, nil
}

// DonorStanding is what a member's paid donations add up to in an app.
type DonorStanding struct {
	Total int64         `json:"total"`
	Tier  *DonationTier `json:"tier"`
}

// tierFor is the highest tier total reaches (a tier is reached when the
// total is at least its required amount).
func tierFor(tiers []DonationTier, total int64) *DonationTier {
	var best *DonationTier
	for i := range tiers {
		if total >= tiers[i].RequiredAmount && tiers[i].RequiredAmount > 0 {
			if best == nil || tiers[i].RequiredAmount >= best.RequiredAmount {
				best = &tiers[i]
			}
		}
	}
	return best
}

// DonorStandingOf sums the user's paid donations and the tier they reach.
func (s *Storage) DonorStandingOf(ctx context.Context, appID, userID string) (*DonorStanding, error) {
	badges, totals, err := s.DonorBadges(ctx, appID, []string{userID})
	if err != nil {
		return nil, err
	}
	return &DonorStanding{Total: totals[userID], Tier: badges[userID]}, nil
}

// DonorBadges answers, for each of userIDs, the tier their paid donations
// reach (absent when none) and their paid total: the badge beside names in
// the feed and on the profile.
func (s *Storage) DonorBadges(ctx context.Context, appID string, userIDs []string) (map[string]*DonationTier, map[string]int64, error) {
	badges, totals := map[string]*DonationTier{}, map[string]int64{}
	if len(userIDs) == 0 {
		return badges, totals, nil
	}
	var rows []struct {
		UserID string `bun:"user_id"`
		Total  int64  `bun:"total"`
	}
	if err := s.db.NewSelect().Model((*Donation)(nil)).ColumnExpr("user_id, SUM(amount) AS total").
		Where("app_id = ? AND status = ? AND user_id IN (?)", appID, DonationPaid, bun.List(userIDs)).
		GroupExpr("user_id").Scan(ctx, &rows); err != nil {
		return nil, nil, fmt.Errorf("sum donations: %w", err)
	}
	if len(rows) == 0 {
		return badges, totals, nil
	}
	tiers, err := s.DonationTiers(ctx, appID)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rows {
		totals[r.UserID] = r.Total
		if t := tierFor(tiers, r.Total); t != nil {
			badges[r.UserID] = t
		}
	}
	return badges, totals, nil
}

// DonationView is one line of the creator's donations list.
type DonationView struct {
	ID          string     `json:"id"`
	Amount      int64      `json:"amount"`
	Currency    string     `json:"currency"`
	Message     string     `json:"message"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"createdAt"`
	ProcessedAt *time.Time `json:"processedAt"`
	Donor       struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"donor"`
}

// DonationTotals sum the app's paid donations.
type DonationTotals struct {
	Count  int   `json:"count"`
	Amount int64 `json:"amount"`
	Donors int   `json:"donors"`
}

// Donations lists the app's paid donations, newest first, with totals.
func (s *Storage) Donations(ctx context.Context, appID string, page, limit int) ([]DonationView, DonationTotals, Pagination, error) {
	page, limit = ClampPage(page, limit)
	var totals DonationTotals
	if err := s.db.NewSelect().Model((*Donation)(nil)).
		ColumnExpr("COUNT(*) AS count, COALESCE(SUM(amount), 0) AS amount, COUNT(DISTINCT user_id) AS donors").
		Where("app_id = ? AND status = ?", appID, DonationPaid).Scan(ctx, &totals.Count, &totals.Amount, &totals.Donors); err != nil {
		return nil, totals, Pagination{}, fmt.Errorf("total donations: %w", err)
	}
	var rows []struct {
		Donation
		Username string `bun:"username"`
	}
	if err := s.db.NewSelect().TableExpr("donations AS d").ColumnExpr("d.*").ColumnExpr("u.username").
		Join("JOIN users AS u ON u.id = d.user_id").
		Where("d.app_id = ? AND d.status = ?", appID, DonationPaid).
		OrderExpr("d.processed_at DESC, d.id DESC").Limit(int64(limit)).Offset(int64((page-1)*limit)).Scan(ctx, &rows); err != nil {
		return nil, totals, Pagination{}, fmt.Errorf("list donations: %w", err)
	}
	out := make([]DonationView, 0, len(rows))
	for _, r := range rows {
		v := DonationView{ID: r.ID, Amount: r.Amount, Currency: r.Currency, Message: r.Message, Status: r.Status,
			CreatedAt: r.CreatedAt, ProcessedAt: r.ProcessedAt}
		v.Donor.ID, v.Donor.Username = r.UserID, r.Username
		out = append(out, v)
	}
	return out, totals, NewPagination(page, limit, totals.Count), nil
}

// DonationByID loads one donation.
func (s *Storage) DonationByID(ctx context.Context, id string) (*Donation, error) {
	d := new(Donation)
	if err := selectOne(ctx, s.db.NewSelect().Model(d).Where("id = ?", id), "donation"); err != nil {
		return nil, err
	}
	return d, nil
}
