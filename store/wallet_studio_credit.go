package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/uptrace/bun"
)

// Issue 43 item 3: the wallet money a creator gives, without a shell.

const (
	// ActionWalletCredit is the audit line of a credit a creator gave a
	// member from the studio; ActionWelcomeCredit of a new welcome credit.
	ActionWalletCredit  = "WALLET_CREDIT"
	ActionWelcomeCredit = "settings.wallet"
	// MaxStudioCredit bounds one credit from the studio and the welcome
	// credit ($1,000.00): a slip of the finger must not print money.
	MaxStudioCredit int64 = 100000
)

// StudioCredit is a credit a creator gives one member of their app from the
// studio. Key is the form's (or the client's) idempotency key: the same key
// for the same member credits once, however often it comes.
type StudioCredit struct {
	AppID, ActorID, UserID string
	Amount                 int64
	Note, Key              string
}

// CheckStudioCredit validates a credit; field errors name the form inputs.
func CheckStudioCredit(in StudioCredit) error {
	switch {
	case in.Amount <= 0:
		return &ErrInvalid{Msg: "Enter an amount above $0", Field: "amount"}
	case in.Amount > MaxStudioCredit:
		return &ErrInvalid{Msg: "One credit is at most " + formatCents(MaxStudioCredit), Field: "amount"}
	case utf8.RuneCountInString(in.Note) > 200:
		return &ErrInvalid{Msg: "The note is at most 200 characters", Field: "note"}
	case in.Key == "" || len(in.Key) > 64 || strings.ContainsAny(in.Key, ": \t\r\n"):
		return &ErrInvalid{Msg: "The form is out of date: reload the page and try again", Field: "key"}
	}
	return nil
}

// CreditMemberWallet puts a creator's credit in a member's wallet and writes
// its audit line, in one transaction; a key already used for this member
// answers the first credit again (replayed) and changes nothing. The
// balance is the member's after it.
func (s *Storage) CreditMemberWallet(ctx context.Context, in StudioCredit) (balance int64, replayed bool, err error) {
	in.Note = strings.TrimSpace(in.Note)
	if err := CheckStudioCredit(in); err != nil {
		return 0, false, err
	}
	memo := "Credit from the creator"
	if in.Note != "" {
		memo = in.Note
	}
	err = s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, again, err := TransferTx(ctx, tx, TransferInput{AppID: in.AppID, Reference: "studio-credit:" + in.UserID + ":" + in.Key,
			Kind: TransferCredit, From: OutsideMoney, To: Member(in.UserID), Amount: in.Amount, Memo: memo})
		if err != nil {
			return err
		}
		replayed = again
		if again {
			return nil
		}
		return writeAudit(ctx, tx, in.AppID, in.ActorID, ActionWalletCredit, in.UserID, formatCents(in.Amount)+" to the wallet: "+memo)
	})
	if err != nil {
		return 0, false, fmt.Errorf("credit member wallet: %w", err)
	}
	balance, err = s.WalletBalance(ctx, in.AppID, in.UserID)
	return balance, replayed, err
}

// SaveWelcomeCredit sets what a new member of the app finds in their
// wallet (minor units, 0 for none), with its audit line.
func (s *Storage) SaveWelcomeCredit(ctx context.Context, appID, actorID string, amount int64) error {
	if amount < 0 || amount > MaxStudioCredit {
		return &ErrInvalid{Msg: "The welcome credit is $0 to " + formatCents(MaxStudioCredit), Field: "welcomeCredit"}
	}
	return s.updateApp(ctx, appID, actorID, ActionWelcomeCredit, "Welcome credit "+formatCents(amount), func(ctx context.Context, tx bun.Tx, app *App) error {
		app.Settings.Wallet.WelcomeCredit = amount
		return nil
	})
}

// formatCents writes minor units as dollars: 1250 is "$12.50".
func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s$%d.%02d", sign, c/100, c%100)
}
