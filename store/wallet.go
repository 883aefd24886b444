package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// The member wallet (SPEC.md's "musepay" method) is an app-scoped
// double-entry ledger. Money only moves by transfers; a transfer writes two
// entries, one taking the amount from an account and one giving it to
// another, so the sum of all balances of an app never changes except through
// the EXTERNAL account, which stands for money from outside (top-ups, the
// demo seed, the CLI) and is the only account allowed below zero.

const (
	WalletMember   = "MEMBER"
	WalletApp      = "APP"
	WalletExternal = "EXTERNAL"

	TransferCredit  = "CREDIT"
	TransferPayment = "PAYMENT"
	TransferRefund  = "REFUND"

	WalletCurrency = "USD"
	// WalletMethod is the payment method name of SPEC.md section 9.
	WalletMethod = "musepay"
)

type WalletAccount struct {
	bun.BaseModel `bun:"table:wallet_accounts"`

	ID       string `bun:",pk" json:"id"`
	AppID    string `bun:",notnull" json:"appId"`
	Kind     string `bun:",notnull" json:"kind"`
	OwnerID  string `bun:",notnull,default:''" json:"ownerId"`
	Currency string `bun:",notnull,default:'USD'" json:"currency"`
	Balance  int64  `bun:",notnull,default:0" json:"balance"`
	// EntryCount numbers the account's entries (WalletEntry.Seq).
	EntryCount int64     `bun:",notnull,default:0" json:"-"`
	CreatedAt  time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt  time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

type WalletTransfer struct {
	bun.BaseModel `bun:"table:wallet_transfers"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull" json:"appId"`
	Reference string    `bun:",notnull" json:"reference"`
	Kind      string    `bun:",notnull" json:"kind"`
	Amount    int64     `bun:",notnull" json:"amount"`
	Currency  string    `bun:",notnull,default:'USD'" json:"currency"`
	OrderID   *string   `json:"orderId"`
	Memo      string    `bun:",notnull,default:''" json:"memo"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

type WalletEntry struct {
	bun.BaseModel `bun:"table:wallet_entries"`

	ID           string `bun:",pk" json:"id"`
	AppID        string `bun:",notnull" json:"-"`
	TransferID   string `bun:",notnull" json:"transferId"`
	AccountID    string `bun:",notnull" json:"accountId"`
	Amount       int64  `bun:",notnull" json:"amount"`
	BalanceAfter int64  `bun:",notnull" json:"balanceAfter"`
	// Seq is the entry's place in its account's ledger, taken under the
	// account row's lock: the history's order, where timestamps can tie.
	Seq       int64     `bun:",notnull,default:0" json:"seq"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// ErrInsufficientFunds: the paying account's balance is below the amount.
var ErrInsufficientFunds = errors.New("insufficient wallet balance")

// ErrReferenceReused: a reference already names a different transfer.
var ErrReferenceReused = errors.New("wallet reference already used for a different transfer")

// WalletParty names an account by kind and owner (a user id for MEMBER,
// empty for APP and EXTERNAL).
type WalletParty struct {
	Kind    string
	OwnerID string
}

func Member(userID string) WalletParty { return WalletParty{WalletMember, userID} }

var (
	AppRevenue   = WalletParty{Kind: WalletApp}
	OutsideMoney = WalletParty{Kind: WalletExternal}
)

// TransferInput is one movement of money. Reference makes it idempotent: a
// second transfer with the same reference in the app moves nothing and
// answers the first.
type TransferInput struct {
	AppID     string
	Reference string
	Kind      string
	From, To  WalletParty
	Amount    int64
	OrderID   *string
	Memo      string
}

// walletAccount returns the account, creating it at zero on first use.
func walletAccount(ctx context.Context, db bun.IDB, appID string, p WalletParty) (*WalletAccount, error) {
	now := time.Now().UTC()
	acc := &WalletAccount{ID: NewID(), AppID: appID, Kind: p.Kind, OwnerID: p.OwnerID, Currency: WalletCurrency, CreatedAt: now, UpdatedAt: now}
	if _, err := db.NewInsert().Model(acc).On("CONFLICT (app_id, kind, owner_id, currency) DO NOTHING").Exec(ctx); err != nil {
		return nil, fmt.Errorf("open wallet account: %w", err)
	}
	acc = new(WalletAccount)
	err := selectOne(ctx, db.NewSelect().Model(acc).
		Where("app_id = ? AND kind = ? AND owner_id = ? AND currency = ?", appID, p.Kind, p.OwnerID, WalletCurrency), "wallet account")
	return acc, err
}

// Transfer moves money in its own transaction.
func (s *Storage) Transfer(ctx context.Context, in TransferInput) (*WalletTransfer, bool, error) {
	var t *WalletTransfer
	var replayed bool
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		t, replayed, err = TransferTx(ctx, tx, in)
		return err
	})
	return t, replayed, err
}

// TransferTx moves money inside tx (the demo seed runs in its own
// transaction). The debit is a conditional update
// (balance >= amount), so of many concurrent payments from one wallet only
// those the balance covers succeed; the CHECK constraint on the table is the
// second line of defence. Both accounts are updated in id order so that two
// transfers between the same pair in opposite directions cannot deadlock.
// replayed is true when the reference had already moved the money.
func TransferTx(ctx context.Context, tx bun.Tx, in TransferInput) (*WalletTransfer, bool, error) {
	if in.Amount <= 0 {
		return nil, false, invalid("Amount must be above 0")
	}
	if in.Reference == "" {
		return nil, false, errors.New("wallet transfer without reference")
	}
	if tx.Dialect().Name() == dialect.SQLite {
		if _, err := tx.ExecContext(ctx, "UPDATE wallet_accounts SET balance = balance WHERE 0"); err != nil {
			return nil, false, fmt.Errorf("lock wallet: %w", err)
		}
	}
	now := time.Now().UTC()
	t := &WalletTransfer{ID: NewID(), AppID: in.AppID, Reference: in.Reference, Kind: in.Kind, Amount: in.Amount,
		Currency: WalletCurrency, OrderID: in.OrderID, Memo: in.Memo, CreatedAt: now}
	res, err := tx.NewInsert().Model(t).On("CONFLICT (app_id, reference) DO NOTHING").Exec(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("record transfer: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		prev := new(WalletTransfer)
		if err := selectOne(ctx, tx.NewSelect().Model(prev).Where("app_id = ? AND reference = ?", in.AppID, in.Reference), "transfer"); err != nil {
			return nil, false, err
		}
		if prev.Amount != in.Amount || prev.Kind != in.Kind {
			return nil, false, ErrReferenceReused
		}
		return prev, true, nil
	}
	from, err := walletAccount(ctx, tx, in.AppID, in.From)
	if err != nil {
		return nil, false, err
	}
	to, err := walletAccount(ctx, tx, in.AppID, in.To)
	if err != nil {
		return nil, false, err
	}
	if from.ID == to.ID {
		return nil, false, invalid("Cannot transfer to the same wallet")
	}
	type move struct {
		acc   *WalletAccount
		delta int64
	}
	moves := []move{{from, -in.Amount}, {to, in.Amount}}
	sort.Slice(moves, func(i, j int) bool { return moves[i].acc.ID < moves[j].acc.ID })
	for _, m := range moves {
		q := tx.NewUpdate().Model((*WalletAccount)(nil)).Set("balance = balance + ?", m.delta).
			Set("entry_count = entry_count + 1").Set("updated_at = ?", now).Where("id = ?", m.acc.ID)
		if m.delta < 0 {
			q = q.Where("(balance >= ? OR kind = ?)", -m.delta, WalletExternal)
		}
		var after, seq int64
		err := q.Returning("balance, entry_count").Scan(ctx, &after, &seq)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, ErrInsufficientFunds
		}
		if err != nil {
			return nil, false, fmt.Errorf("move money: %w", err)
		}
		e := &WalletEntry{ID: NewID(), AppID: in.AppID, TransferID: t.ID, AccountID: m.acc.ID, Amount: m.delta,
			BalanceAfter: after, Seq: seq, CreatedAt: now}
		if _, err := tx.NewInsert().Model(e).Exec(ctx); err != nil {
			return nil, false, fmt.Errorf("record entry: %w", err)
		}
	}
	return t, false, nil
}

// CreditWallet adds money from outside to a member's wallet (demo seed,
// CLI, a top-up). The reference keeps a repeated credit from counting twice.
func (s *Storage) CreditWallet(ctx context.Context, appID, userID string, amount int64, reference, memo string) (*WalletTransfer, bool, error) {
	return s.Transfer(ctx, TransferInput{AppID: appID, Reference: reference, Kind: TransferCredit,
		From: OutsideMoney, To: Member(userID), Amount: amount, Memo: memo})
}

// WalletBalance is the member's balance in the app (0 without an account).
func (s *Storage) WalletBalance(ctx context.Context, appID, userID string) (int64, error) {
	acc := new(WalletAccount)
	err := selectOne(ctx, s.db.NewSelect().Model(acc).
		Where("app_id = ? AND kind = ? AND owner_id = ? AND currency = ?", appID, WalletMember, userID, WalletCurrency), "wallet account")
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return acc.Balance, nil
}

func orderPaymentRef(orderID string) string { return "order:" + orderID + ":payment" }
func orderRefundRef(orderID string) string  { return "order:" + orderID + ":refund" }

// PayOrderFromWallet pays a member's PENDING order from their wallet to the
// app's account and marks it PAID, in one transaction: either both happen or
// neither. Paying an order that this wallet already paid answers it again.
func (s *Storage) PayOrderFromWallet(ctx context.Context, appID, userID, orderID string) (*Order, error) {
	var order *Order
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if tx.Dialect().Name() == dialect.SQLite {
			if _, err := tx.ExecContext(ctx, "UPDATE orders SET status = status WHERE 0"); err != nil {
				return fmt.Errorf("lock order: %w", err)
			}
		}
		o := new(Order)
		q := tx.NewSelect().Model(o).Where("id = ? AND app_id = ? AND user_id = ?", orderID, appID, userID)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := selectOne(ctx, q, "order"); err != nil {
			return err
		}
		order = o
		if o.Status != OrderPending {
			if o.PaymentMethod == WalletMethod && o.PaidAt != nil && o.Status != OrderCancelled {
				return nil // already paid by this wallet: a retry
			}
			return ErrIllegalTransition
		}
		if err := ReadyToPay(ctx, tx, o); err != nil {
			return err
		}
		if o.Currency != WalletCurrency {
			return invalid("The wallet pays in " + WalletCurrency + " only")
		}
		ref := "free"
		if o.Total > 0 {
			t, _, err := TransferTx(ctx, tx, TransferInput{AppID: appID, Reference: orderPaymentRef(o.ID), Kind: TransferPayment,
				From: Member(userID), To: AppRevenue, Amount: o.Total, OrderID: &o.ID, Memo: "Order " + o.OrderNumber})
			if err != nil {
				return err
			}
			ref = t.ID
		}
		return s.MarkPaidTx(ctx, tx, o, WalletMethod, ref)
	})
	return order, err
}

// WalletMovement is one line of a member's wallet history.
type WalletMovement struct {
	ID           string    `json:"id"`
	Kind         string    `json:"kind" tstype:"WalletMovementKind"`
	Amount       int64     `json:"amount"`
	BalanceAfter int64     `json:"balanceAfter"`
	Currency     string    `json:"currency"`
	Memo         string    `json:"memo"`
	OrderID      *string   `json:"orderId"`
	CreatedAt    time.Time `json:"createdAt"`
}

// WalletView is the transactions page: balance and movements, newest first.
type WalletView struct {
	Balance   int64            `json:"balance"`
	Currency  string           `json:"currency"`
	Movements []WalletMovement `json:"movements"`
}

// Wallet loads the member's balance and a page of movements.
func (s *Storage) Wallet(ctx context.Context, appID, userID string, page, limit int) (*WalletView, Pagination, error) {
	page, limit = ClampPage(page, limit)
	view := &WalletView{Currency: WalletCurrency, Movements: []WalletMovement{}}
	acc := new(WalletAccount)
	err := selectOne(ctx, s.db.NewSelect().Model(acc).
		Where("app_id = ? AND kind = ? AND owner_id = ? AND currency = ?", appID, WalletMember, userID, WalletCurrency), "wallet account")
	if errors.Is(err, ErrNotFound) {
		return view, NewPagination(page, limit, 0), nil
	}
	if err != nil {
		return nil, Pagination{}, err
	}
	view.Balance = acc.Balance
	var rows []struct {
		ID           string    `bun:"id"`
		Amount       int64     `bun:"amount"`
		BalanceAfter int64     `bun:"balance_after"`
		CreatedAt    time.Time `bun:"created_at"`
		Kind         string    `bun:"kind"`
		Memo         string    `bun:"memo"`
		OrderID      *string   `bun:"order_id"`
	}
	total, err := s.db.NewSelect().TableExpr("wallet_entries AS e").Join("JOIN wallet_transfers AS t ON t.id = e.transfer_id").
		ColumnExpr("e.id, e.amount, e.balance_after, e.created_at, t.kind, t.memo, t.order_id").
		Where("e.account_id = ?", acc.ID).OrderExpr("e.seq DESC, e.id DESC").
		Limit(int64(limit)).Offset(int64((page-1)*limit)).ScanAndCount(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, Pagination{}, fmt.Errorf("load wallet movements: %w", err)
	}
	for _, r := range rows {
		view.Movements = append(view.Movements, WalletMovement{ID: r.ID, Kind: r.Kind, Amount: r.Amount,
			BalanceAfter: r.BalanceAfter, Currency: WalletCurrency, Memo: r.Memo, OrderID: r.OrderID, CreatedAt: r.CreatedAt})
	}
	return view, NewPagination(page, limit, int(total)), nil
}
