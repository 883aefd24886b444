package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Creator payouts (issue 24). Each app may have one Stripe Connect account
// (Express), which its creator onboards from the studio; card payments of
// the app are destination charges to it, less the platform fee. Whatever
// the method, what the creator earned is kept in the app's wallet ledger
// (wallet.go): the APP account is the creator's balance, PLATFORM holds
// the platform's fees and EXTERNAL stands for money that came from (or
// went back to) outside, a card or PayPal.

const (
	// WalletPlatform is the account the platform's fees go to.
	WalletPlatform = "PLATFORM"

	// TransferEarning: a card or PayPal payment for the app, gross.
	TransferEarning = "EARNING"
	// TransferFee: the platform's fee on a payment.
	TransferFee = "FEE"
	// TransferFeeRefund: the part of a fee given back with a refund.
	TransferFeeRefund = "FEE_REFUND"
	// TransferProcessorFee: what the card processor or PayPal kept of a
	// payment (Stripe's balance transaction fee, PayPal's paypal_fee).
	// Neither gives it back on a refund.
	TransferProcessorFee = "PROCESSOR_FEE"
)

// PlatformCosts is the platform's own money outside the app's ledger:
// processor fees are booked from it, so the creator's balance keeps what
// was earned less the platform fee (what Stripe transfers on a destination
// charge, whose processing fee Stripe charges to the platform).
var PlatformCosts = WalletParty{Kind: WalletExternal, OwnerID: "platform"}

// PlatformFees is the platform's account in an app's ledger.
var PlatformFees = WalletParty{Kind: WalletPlatform}

// PayoutAccount is an app's Stripe Connect account and what Stripe last
// said of it.
type PayoutAccount struct {
	bun.BaseModel `bun:"table:payout_accounts"`

	AppID            string `bun:",pk" json:"appId"`
	StripeAccountID  string `bun:",notnull,default:''" json:"stripeAccountId"`
	ChargesEnabled   bool   `bun:",notnull,default:false" json:"chargesEnabled"`
	PayoutsEnabled   bool   `bun:",notnull,default:false" json:"payoutsEnabled"`
	DetailsSubmitted bool   `bun:",notnull,default:false" json:"detailsSubmitted"`
	// CurrentlyDue lists Stripe's requirements.currently_due, comma-separated.
	CurrentlyDue   string `bun:",notnull,default:''" json:"currentlyDue"`
	DisabledReason string `bun:",notnull,default:''" json:"disabledReason"`
	// FeeBP is the operator's fee for this app in basis points (NULL: the
	// platform's PLATFORM_FEE_PERCENT).
	FeeBP *int64 `bun:"fee_bp" json:"feeBp"`
	// StateAt is the Unix time of the report the state comes from (an
	// event's created, or the moment the API was asked): an older report
	// delivered late changes nothing.
	StateAt   int64     `bun:",notnull,default:0" json:"-"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

// AccountState is what Stripe says of a connected account.
type AccountState struct {
	AccountID        string
	ChargesEnabled   bool
	PayoutsEnabled   bool
	DetailsSubmitted bool
	CurrentlyDue     []string
	DisabledReason   string
	// At is when Stripe said it (Unix seconds).
	At int64
}

// PayoutAccountOf answers the app's payout account, nil when it has none.
func (s *Storage) PayoutAccountOf(ctx context.Context, appID string) (*PayoutAccount, error) {
	pa := new(PayoutAccount)
	err := selectOne(ctx, s.db.NewSelect().Model(pa).Where("app_id = ?", appID), "payout account")
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return pa, err
}

// ChargesReady reports whether card payments of the app can go to its own
// connected account.
func (pa *PayoutAccount) ChargesReady() bool {
	return pa != nil && pa.StripeAccountID != "" && pa.ChargesEnabled
}

// ensurePayoutRow makes the app's row if it has none.
func ensurePayoutRow(ctx context.Context, db bun.IDB, appID string) error {
	now := time.Now().UTC()
	_, err := db.NewInsert().Model(&PayoutAccount{AppID: appID, CreatedAt: now, UpdatedAt: now}).
		On("CONFLICT (app_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return fmt.Errorf("open payout account: %w", err)
	}
	return nil
}

// AttachStripeAccount records accountID as the app's connected account
// unless it has one already, and answers the one it has: of two concurrent
// connects (which Stripe's idempotency key makes one account anyway) the
// first to commit wins and the other reads it.
func (s *Storage) AttachStripeAccount(ctx context.Context, appID, actorID, accountID string) (*PayoutAccount, error) {
	if err := ensurePayoutRow(ctx, s.db, appID); err != nil {
		return nil, err
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*PayoutAccount)(nil)).Set("stripe_account_id = ?", accountID).
			Set("updated_at = ?", time.Now().UTC()).Where("app_id = ? AND stripe_account_id = ''", appID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("attach stripe account: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // the first account recorded stays
		}
		return payoutChanged(ctx, tx, appID, actorID, "payouts.connect",
			"Card payments will be paid out to the Stripe account "+accountID+" once its setup is complete.")
	})
	if err != nil {
		return nil, err
	}
	return s.PayoutAccountOf(ctx, appID)
}

// MailPayoutChanged is the mail the creator gets for every change to where
// the app's money goes (always sent).
const MailPayoutChanged = "PAYOUT_CHANGED"

// payoutChanged records, in the transaction of the change, that actorID
// changed where the app's money goes (what): a line in the audit log and a
// mail to the creator, so a change they did not make does not go unseen.
func payoutChanged(ctx context.Context, tx bun.Tx, appID, actorID, action, what string) error {
	if err := writeAudit(ctx, tx, appID, actorID, action, "", what); err != nil {
		return err
	}
	var app struct {
		Name      string `bun:"name"`
		CreatorID string `bun:"creator_id"`
	}
	if err := tx.NewSelect().Table("apps").Column("name", "creator_id").Where("id = ?", appID).Scan(ctx, &app); err != nil {
		return fmt.Errorf("load app for payout mail: %w", err)
	}
	_, err := MailMember(ctx, tx, OutgoingMail{Key: "payout-changed:" + appID + ":" + NewID(), Kind: MailPayoutChanged, AppID: appID,
		UserID: app.CreatorID, Transactional: true, Content: MailContent{
			Subject: "Where your app's money goes was changed", Heading: "Payout settings changed",
			Paragraphs: []string{what, "If you did not make this change, change your password now and set the payout account back in the studio."},
			Action:     &MailLink{Label: "Check payout settings", Path: "/apps/" + app.Name + "/studio/payouts"}}})
	return err
}

// AuditPayoutAction writes a payout action that changes no setting here
// (opening the Stripe dashboard, where the bank account is managed) to the
// app's audit log.
func (s *Storage) AuditPayoutAction(ctx context.Context, appID, actorID, action, detail string) error {
	return writeAudit(ctx, s.db, appID, actorID, action, "", detail)
}

// ApplyAccountState records what Stripe said of a connected account, unless
// a newer report is recorded already. It answers the app's account (nil,
// false when no app has that account: another platform's, or a deleted
// app's) and whether the state changed.
func (s *Storage) ApplyAccountState(ctx context.Context, st AccountState) (*PayoutAccount, bool, error) {
	if st.AccountID == "" {
		return nil, false, nil
	}
	res, err := s.db.NewUpdate().Model((*PayoutAccount)(nil)).
		Set("charges_enabled = ?", st.ChargesEnabled).Set("payouts_enabled = ?", st.PayoutsEnabled).
		Set("details_submitted = ?", st.DetailsSubmitted).Set("currently_due = ?", strings.Join(st.CurrentlyDue, ",")).
		Set("disabled_reason = ?", st.DisabledReason).Set("state_at = ?", st.At).Set("updated_at = ?", time.Now().UTC()).
		Where("stripe_account_id = ? AND state_at <= ?", st.AccountID, st.At).Exec(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("record account state: %w", err)
	}
	n, _ := res.RowsAffected()
	pa := new(PayoutAccount)
	err = selectOne(ctx, s.db.NewSelect().Model(pa).Where("stripe_account_id = ?", st.AccountID), "payout account")
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if n > 0 {
		s.InvalidateApp(ctx, pa.AppID)
	}
	return pa, n > 0, nil
}

// SetAppFee sets the app's platform fee in basis points (nil: the
// platform's default).
func (s *Storage) SetAppFee(ctx context.Context, appID string, bp *int64) error {
	if bp != nil && (*bp < 0 || *bp > 10000) {
		return invalid("The fee must be between 0 and 100 percent")
	}
	if err := ensurePayoutRow(ctx, s.db, appID); err != nil {
		return err
	}
	_, err := s.db.NewUpdate().Model((*PayoutAccount)(nil)).Set("fee_bp = ?", bp).Set("updated_at = ?", time.Now().UTC()).
		Where("app_id = ?", appID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("set app fee: %w", err)
	}
	return nil
}

// FeeBPOf is the platform fee of the app in basis points: its own, or the
// platform's.
func (s *Storage) FeeBPOf(ctx context.Context, db bun.IDB, appID string) (int64, error) {
	var bp sql.NullInt64
	err := db.NewSelect().Model((*PayoutAccount)(nil)).Column("fee_bp").Where("app_id = ?", appID).Limit(1).Scan(ctx, &bp)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("load app fee: %w", err)
	}
	if bp.Valid {
		return bp.Int64, nil
	}
	return s.platformFeeBP, nil
}

// AppFeeBP is FeeBPOf outside a transaction.
func (s *Storage) AppFeeBP(ctx context.Context, appID string) (int64, error) {
	return s.FeeBPOf(ctx, s.db, appID)
}

// FeeOn is the fee of bp basis points on amount, rounded half up: the
// application_fee_amount a card payment carries and the FEE the ledger
// books are both this.
func FeeOn(amount, bp int64) int64 {
	if amount <= 0 || bp <= 0 {
		return 0
	}
	return (amount*bp + 5000) / 10000
}

// FeeRefundOn is how much of fee goes back when refunded of amount is
// refunded in all, in proportion and rounded as Stripe's
// refund_application_fee does it for the total so far; a full refund gives
// all of the fee back.
func FeeRefundOn(fee, amount, refunded int64) int64 {
	if amount <= 0 || fee <= 0 {
		return 0
	}
	if refunded >= amount {
		return fee
	}
	return (fee*refunded + amount/2) / amount
}

// PlatformFee is the fee the app pays on amount.
func (s *Storage) PlatformFee(ctx context.Context, appID string, amount int64) (int64, error) {
	bp, err := s.FeeBPOf(ctx, s.db, appID)
	if err != nil {
		return 0, err
	}
	return FeeOn(amount, bp), nil
}

// Earning is money an app earned: a paid order, donation or renewal.
type Earning struct {
	AppID string
	// Ref names the payment ("order:ID", "donation:ID", ...); the
	// ledger's references are made from it, so booking it again (a
	// repeated webhook) books nothing.
	Ref     string
	OrderID *string
	Amount  int64
	// InLedger: the gross is in the APP account already (a wallet
	// payment moved it there); otherwise it comes from outside.
	InLedger bool
	Currency string
	Memo     string
}

// bookEarningTx books a payment in the app's ledger inside tx: the gross
// from outside to the creator (unless a wallet payment put it there), then
// the platform's fee from the creator to the platform.
func (s *Storage) bookEarningTx(ctx context.Context, tx bun.Tx, e Earning) error {
	if e.Amount <= 0 || (e.Currency != "" && !strings.EqualFold(e.Currency, WalletCurrency)) {
		return nil // the ledger keeps USD only
	}
	if !e.InLedger {
		if _, _, err := TransferTx(ctx, tx, TransferInput{AppID: e.AppID, Reference: e.Ref + ":earning", Kind: TransferEarning,
			From: OutsideMoney, To: AppRevenue, Amount: e.Amount, OrderID: e.OrderID, Memo: e.Memo}); err != nil {
			return fmt.Errorf("book earning: %w", err)
		}
	}
	bp, err := s.FeeBPOf(ctx, tx, e.AppID)
	if err != nil {
		return err
	}
	if fee := FeeOn(e.Amount, bp); fee > 0 {
		if _, _, err := TransferTx(ctx, tx, TransferInput{AppID: e.AppID, Reference: e.Ref + ":fee", Kind: TransferFee,
			From: AppRevenue, To: PlatformFees, Amount: fee, OrderID: e.OrderID, Memo: "Platform fee: " + e.Memo}); err != nil {
			return fmt.Errorf("book fee: %w", err)
		}
	}
	return nil
}

// ProcessorFee is what a processor kept of one payment, as it reported it.
type ProcessorFee struct {
	AppID string
	// Ref is the payment's Earning.Ref ("order:ID", "donation:ID"): one
	// fee per payment, however often it is reported.
	Ref      string
	OrderID  *string
	Amount   int64
	Currency string
	// ByPlatform: the platform's account paid it (a Stripe destination
	// charge), rather than the account paid (PayPal's payee). Either way
	// it is booked as the platform's cost (BookProcessorFee).
	ByPlatform bool
	Memo       string
}

// BookProcessorFee books a processor's fee once per payment, after the
// payment itself was booked (an unbooked payment books no fee).
func (s *Storage) BookProcessorFee(ctx context.Context, f ProcessorFee) error {
	if f.Amount <= 0 || (f.Currency != "" && !strings.EqualFold(f.Currency, WalletCurrency)) {
		return nil
	}
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		booked, err := tx.NewSelect().Model((*WalletTransfer)(nil)).
			Where("app_id = ? AND reference IN (?)", f.AppID, bun.List([]string{f.Ref + ":earning", f.Ref + ":fee", f.Ref})).Exists(ctx)
		if err != nil {
			return fmt.Errorf("check payment booked: %w", err)
		}
		if !booked {
			return nil
		}
		// The platform bears it: the creator's balance keeps what was
		// earned, so a full refund (which the processor does not give its
		// fee back for) never overdraws it.
		if _, _, err := TransferTx(ctx, tx, TransferInput{AppID: f.AppID, Reference: f.Ref + ":processor-fee", Kind: TransferProcessorFee,
			From: PlatformCosts, To: OutsideMoney, Amount: f.Amount, OrderID: f.OrderID, Memo: "Processor fee: " + f.Memo}); err != nil {
			return fmt.Errorf("book processor fee: %w", err)
		}
		return nil
	})
}

// orderLedger sums what the ledger holds of an order: the gross booked
// into the creator's account, the fee, and what went back of each.
type orderLedger struct {
	Gross, Fee, Refunded, FeeRefunded int64
}

func orderLedgerOf(ctx context.Context, tx bun.IDB, o *Order) (orderLedger, error) {
	var rows []struct {
		Kind   string `bun:"kind"`
		Amount int64  `bun:"amount"`
	}
	err := tx.NewSelect().Model((*WalletTransfer)(nil)).ColumnExpr("kind, SUM(amount) AS amount").
		Where("app_id = ? AND order_id = ?", o.AppID, o.ID).Group("kind").Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return orderLedger{}, fmt.Errorf("load order ledger: %w", err)
	}
	var l orderLedger
	for _, r := range rows {
		switch r.Kind {
		case TransferEarning, TransferPayment:
			l.Gross += r.Amount
		case TransferFee:
			l.Fee += r.Amount
		case TransferRefund:
			l.Refunded += r.Amount
		case TransferFeeRefund:
			l.FeeRefunded += r.Amount
		}
	}
	return l, nil
}

// bookRefundTx brings the ledger of o to refunded in all, inside the
// transaction that records the refund (the order's row is locked): the
// fee goes back in proportion first, then (for money that came from
// outside) the refund leaves the creator's account. The wallet's own
// refund transfer (RefundOrderAmount) is the gross part of a wallet order.
// It books only what is missing, so reports of the same total book once;
// an order paid before the ledger kept earnings books nothing.
func (s *Storage) bookRefundTx(ctx context.Context, tx bun.Tx, o *Order, refunded int64) error {
	if o.Total <= 0 || refunded <= 0 {
		return nil
	}
	l, err := orderLedgerOf(ctx, tx, o)
	if err != nil || l.Gross == 0 {
		return err
	}
	if refunded > l.Gross {
		refunded = l.Gross
	}
	if back := FeeRefundOn(l.Fee, l.Gross, refunded) - l.FeeRefunded; back > 0 {
		if _, _, err := TransferTx(ctx, tx, TransferInput{AppID: o.AppID, Reference: fmt.Sprintf("order:%s:fee-refund:%d", o.ID, refunded),
			Kind: TransferFeeRefund, From: PlatformFees, To: AppRevenue, Amount: back, OrderID: &o.ID,
			Memo: "Platform fee back: refund of order " + o.OrderNumber}); err != nil {
			return fmt.Errorf("book fee refund: %w", err)
		}
	}
	if o.PaymentMethod == WalletMethod {
		return nil
	}
	if out := refunded - l.Refunded; out > 0 {
		if _, _, err := TransferTx(ctx, tx, TransferInput{AppID: o.AppID, Reference: fmt.Sprintf("order:%s:refund-out:%d", o.ID, refunded),
			Kind: TransferRefund, From: AppRevenue, To: OutsideMoney, Amount: out, OrderID: &o.ID,
			Memo: "Refund of order " + o.OrderNumber}); err != nil {
			return fmt.Errorf("book refund: %w", err)
		}
	}
	return nil
}

// StatementMonth is one month of an app's earnings statement.
type StatementMonth struct {
	// Month is "2026-11".
	Month       string `json:"month"`
	Gross       int64  `json:"gross"`
	Fees        int64  `json:"fees"`
	Refunds     int64  `json:"refunds"`
	FeesRefunds int64  `json:"feesRefunded"`
	// ProcessorFees: what the processors kept of the app's payments
	// (store.ProcessorFee), shown for the record: the platform bears them,
	// so they are not in Net.
	ProcessorFees int64 `json:"processorFees"`
	Net           int64 `json:"net"`
	Payments      int   `json:"payments"`
}

// Statement is the creator's balance and earnings by month, newest first.
type Statement struct {
	Balance  int64            `json:"balance"`
	Currency string           `json:"currency"`
	Months   []StatementMonth `json:"months"`
	Totals   StatementMonth   `json:"totals"`
}

// StatementOf sums the app account's entries by month (UTC).
func (s *Storage) StatementOf(ctx context.Context, appID string) (*Statement, error) {
	st := &Statement{Currency: WalletCurrency, Months: []StatementMonth{}}
	acc := new(WalletAccount)
	err := selectOne(ctx, s.db.NewSelect().Model(acc).
		Where("app_id = ? AND kind = ? AND owner_id = '' AND currency = ?", appID, WalletApp, WalletCurrency), "wallet account")
	if errors.Is(err, ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	st.Balance = acc.Balance
	var rows []struct {
		Amount    int64     `bun:"amount"`
		CreatedAt time.Time `bun:"created_at"`
		Kind      string    `bun:"kind"`
	}
	err = s.db.NewSelect().TableExpr("wallet_entries AS e").Join("JOIN wallet_transfers AS t ON t.id = e.transfer_id").
		ColumnExpr("e.amount, e.created_at, t.kind").Where("e.account_id = ?", acc.ID).OrderExpr("e.seq DESC").Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load statement: %w", err)
	}
	byMonth := map[string]*StatementMonth{}
	var order []string
	for _, r := range rows {
		key := r.CreatedAt.UTC().Format("2006-01")
		m := byMonth[key]
		if m == nil {
			m = &StatementMonth{Month: key}
			byMonth[key] = m
			order = append(order, key)
		}
		addEntry(m, r.Kind, r.Amount)
		addEntry(&st.Totals, r.Kind, r.Amount)
	}
	var fees []struct {
		Amount    int64     `bun:"amount"`
		CreatedAt time.Time `bun:"created_at"`
	}
	if err := s.db.NewSelect().Model((*WalletTransfer)(nil)).Column("amount", "created_at").
		Where("app_id = ? AND kind = ?", appID, TransferProcessorFee).Scan(ctx, &fees); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load processor fees: %w", err)
	}
	for _, f := range fees {
		key := f.CreatedAt.UTC().Format("2006-01")
		if byMonth[key] == nil {
			byMonth[key] = &StatementMonth{Month: key}
			order = append(order, key)
			sort.Sort(sort.Reverse(sort.StringSlice(order)))
		}
		byMonth[key].ProcessorFees += f.Amount
		st.Totals.ProcessorFees += f.Amount
	}
	for _, k := range order {
		st.Months = append(st.Months, *byMonth[k])
	}
	return st, nil
}

func addEntry(m *StatementMonth, kind string, amount int64) {
	switch {
	case kind == TransferFee:
		m.Fees += -amount
	case kind == TransferFeeRefund:
		m.FeesRefunds += amount
	case kind == TransferRefund:
		m.Refunds += -amount
	case amount > 0:
		m.Gross += amount
		m.Payments++
	default:
		m.Refunds += -amount
	}
	m.Net += amount
}

// LedgerSums are an app's totals by transfer kind (tests compare them with
// the provider's).
func (s *Storage) LedgerSums(ctx context.Context, appID string) (map[string]int64, error) {
	var rows []struct {
		Kind   string `bun:"kind"`
		Amount int64  `bun:"amount"`
	}
	err := s.db.NewSelect().Model((*WalletTransfer)(nil)).ColumnExpr("kind, SUM(amount) AS amount").
		Where("app_id = ?", appID).Group("kind").Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load ledger sums: %w", err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Kind] = r.Amount
	}
	return out, nil
}
