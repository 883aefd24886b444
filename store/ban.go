package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Ban kinds: a banned member cannot write, react, join, chat or buy, and
// loses their membership; a silenced one can read and buy but not write.
const (
	BanKindBan     = "BAN"
	BanKindSilence = "SILENCE"
)

// Ban is an app's ban or silence of a member, until EndsAt (nil: for good).
// Email is the account's normalised e-mail: a new account with it is held
// by the same ban.
type Ban struct {
	bun.BaseModel `bun:"table:bans"`

	ID        string     `bun:",pk" json:"id"`
	AppID     string     `bun:",notnull,unique:ban_once" json:"-"`
	UserID    string     `bun:",notnull,unique:ban_once" json:"userId"`
	Email     string     `bun:",notnull,default:''" json:"-"`
	Kind      string     `bun:",notnull" json:"kind" tstype:"'BAN' | 'SILENCE'"`
	Reason    string     `bun:",notnull,default:''" json:"reason"`
	EndsAt    *time.Time `json:"endsAt"`
	CreatedBy string     `bun:",notnull" json:"-"`
	CreatedAt time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// BanOf is the member's ban or silence in force in the app at now, matched
// by account or by normalised e-mail (email "" skips that), or nil.
func (s *Storage) BanOf(ctx context.Context, appID, userID, email string, now time.Time) (*Ban, error) {
	// One spelling of which ban holds: StandingOf's (its membership half
	// is one indexed lookup more).
	_, b, err := s.StandingOf(ctx, appID, userID, email, now)
	return b, err
}

// NewBan is what BanMember needs.
type NewBan struct {
	AppID, UserID, ActorID, Kind, Reason string
	EndsAt                               *time.Time
	// Target is the report target the ban answers, whose reports close.
	Target *ReportTarget
}

// BanMember bans or silences a member (replacing an earlier ban of theirs).
// A ban also ends their membership and their attendance of the app's events
// (except events they host), so they leave every member list; the audit
// line and the closing of the reports happen in the same transaction.
func (s *Storage) BanMember(ctx context.Context, n NewBan) (*Ban, error) {
	if n.Kind != BanKindBan && n.Kind != BanKindSilence {
		return nil, invalid("Choose ban or silence")
	}
	u := new(User)
	if err := selectOne(ctx, s.db.NewSelect().Model(u).Where("id = ?", n.UserID), "user "+n.UserID); err != nil {
		return nil, err
	}
	var owner string
	if err := s.db.NewSelect().Model((*Membership)(nil)).Column("role").Where("app_id = ? AND user_id = ?", n.AppID, n.UserID).
		Scan(ctx, &owner); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load role: %w", err)
	}
	if owner == RoleCreator {
		return nil, ErrForbidden // nobody bans the app's creator
	}
	b := &Ban{ID: NewID(), AppID: n.AppID, UserID: n.UserID, Email: BanEmailKey(u.Email), Kind: n.Kind, Reason: n.Reason,
		EndsAt: n.EndsAt, CreatedBy: n.ActorID, CreatedAt: time.Now().UTC()}
	action := ActionBan
	if n.Kind == BanKindSilence {
		action = ActionSilence
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, n.AppID) // member counts and attendee lists
		if _, err := tx.NewInsert().Model(b).On("CONFLICT (app_id, user_id) DO UPDATE").
			Set("kind = EXCLUDED.kind, reason = EXCLUDED.reason, ends_at = EXCLUDED.ends_at, email = EXCLUDED.email").
			Set("created_by = EXCLUDED.created_by, created_at = EXCLUDED.created_at").Exec(ctx); err != nil {
			return fmt.Errorf("save ban: %w", err)
		}
		if n.Kind == BanKindBan {
			if _, err := tx.NewDelete().Model((*Membership)(nil)).Where("app_id = ? AND user_id = ?", n.AppID, n.UserID).Exec(ctx); err != nil {
				return fmt.Errorf("end membership: %w", err)
			}
			if err := recordRole(ctx, tx, n.AppID, n.UserID); err != nil {
				return err
			}
			if _, err := tx.NewDelete().Model((*Attendee)(nil)).
				Where("user_id = ? AND role <> ? AND event_id IN (SELECT id FROM events WHERE app_id = ?)", n.UserID, AttendeeHost, n.AppID).
				Exec(ctx); err != nil {
				return fmt.Errorf("end attendance: %w", err)
			}
			if _, err := tx.NewDelete().Model((*PushSubscription)(nil)).Where("app_id = ? AND user_id = ?", n.AppID, n.UserID).Exec(ctx); err != nil {
				return fmt.Errorf("drop push subscriptions: %w", err)
			}
		}
		member := &ReportTarget{Type: TargetMember, ID: n.UserID, UserID: n.UserID}
		if err := closeReports(ctx, tx, n.AppID, member, ReportActioned); err != nil {
			return err
		}
		t := member
		if n.Target != nil && n.Target.Type != TargetMember {
			t = n.Target
			if err := closeReports(ctx, tx, n.AppID, t, ReportActioned); err != nil {
				return err
			}
		}
		reason := n.Reason
		if n.EndsAt != nil {
			reason += " (until " + n.EndsAt.UTC().Format("2006-01-02 15:04 UTC") + ")"
		}
		return logAction(ctx, tx, ModerationEntry{AppID: n.AppID, ActorID: n.ActorID, Action: action, TargetType: t.Type,
			TargetID: t.ID, TargetUserID: n.UserID, Reason: reason})
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// LiftBan ends a member's ban or silence.
func (s *Storage) LiftBan(ctx context.Context, appID, actorID, userID, reason string) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*Ban)(nil)).Where("app_id = ? AND user_id = ?", appID, userID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("lift ban: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		// Their class (what the page cache remembers of them) was banned.
		memberChanged(ctx, appID, userID)
		return logAction(ctx, tx, ModerationEntry{AppID: appID, ActorID: actorID, Action: ActionLift, TargetType: TargetMember,
			TargetID: userID, TargetUserID: userID, Reason: reason})
	})
}

// BanView is a ban in the studio's list.
type BanView struct {
	Ban
	Username string `json:"username"`
}

// Bans lists an app's bans and silences in force, newest first.
func (s *Storage) Bans(ctx context.Context, appID string, now time.Time) ([]BanView, error) {
	var rows []BanView
	if err := s.db.NewSelect().TableExpr("bans AS b").ColumnExpr("b.*").ColumnExpr("COALESCE(u.username, '') AS username").
		Join("LEFT JOIN users AS u ON u.id = b.user_id").
		Where("b.app_id = ? AND (b.ends_at IS NULL OR b.ends_at > ?)", appID, now.UTC()).
		OrderExpr("b.created_at DESC").Limit(500).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("list bans: %w", err)
	}
	if rows == nil {
		rows = []BanView{}
	}
	return rows, nil
}

// BanEmailKey is the form of an address a ban matches: lower case, and for
// the providers that deliver every spelling of a mailbox to it (Gmail
// ignores dots in the local part and everything after a '+', and
// googlemail.com is gmail.com) the one mailbox those spellings reach, so a
// banned member does not come back as J.Doe+2@googlemail.com. Other
// providers differ (dots matter at most of them; a '+' tag at some), so
// their addresses are only lower-cased: a ban must never reach another
// person's mailbox.
func BanEmailKey(email string) string {
	email = NormalizeEmail(email)
	local, domain, ok := strings.Cut(email, "@")
	if !ok || strings.Contains(domain, "@") {
		return email
	}
	if canonical, ok := dotAndTagBlind[domain]; ok {
		local, _, _ = strings.Cut(local, "+")
		local = strings.ReplaceAll(local, ".", "")
		domain = canonical
	}
	return local + "@" + domain
}

// dotAndTagBlind: domains whose mailboxes ignore dots and '+tags' in the
// local part, to the domain they are one with. No well-kept Go library
// decides this (issue 41 item 8), so the table holds only what Google
// documents for Gmail.
var dotAndTagBlind = map[string]string{"gmail.com": "gmail.com", "googlemail.com": "gmail.com"}
