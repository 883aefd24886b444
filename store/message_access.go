package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Content for each tier (issue 40 item 2): the ONE access rule of a message.
// A post or story is for everyone (PUBLIC), the app's followers
// (FOLLOWERS), its paying members (MEMBERS: any tier) or a given tier and
// above (MEMBERS with a lowest tier). Moderators, admins and the creator
// read everything. The app-wide gate of SPEC.md still applies on top of
// this and picks the default audience of a new post. Every path that
// hands a message to a viewer asks CanRead (through LockViews) or, in SQL,
// takes only PUBLIC messages (PublicPosts, search for visitors).

// Audiences.
const (
	AccessPublic    = "PUBLIC"
	AccessFollowers = "FOLLOWERS"
	AccessMembers   = "MEMBERS"
)

// MessageAccess is a message's access setting as the API takes and answers
// it.
type MessageAccess struct {
	Audience  string  `json:"audience" tstype:"'PUBLIC' | 'FOLLOWERS' | 'MEMBERS'"`
	MinTierID *string `json:"minTierId"`
}

// Reader is what decides what one viewer may read in one app.
type Reader struct {
	Role string
	// Member: the viewer holds a valid tier; Rank is that tier's rank.
	Member bool
	Rank   int
}

// Key names the reader's level for caches shared between viewers (the
// page cache): two viewers with one key read the same messages.
func (r Reader) Key() string {
	return r.Role + "/" + strconv.FormatBool(r.Member) + "/" + strconv.Itoa(r.Rank)
}

// ReaderOf is the reader of a viewer with role in the app (userID empty for
// a visitor). Only a SUBSCRIBER can hold a tier that matters (staff read
// everything), so only they cost a query.
func (s *Storage) ReaderOf(ctx context.Context, appID, userID, role string, now time.Time) (Reader, error) {
	r := Reader{Role: role}
	if userID == "" || role != RoleSubscriber {
		return r, nil
	}
	var rows []struct {
		Rank int `bun:"tier_rank"`
	}
	q := s.db.NewSelect().TableExpr("subscriptions AS s").Join("JOIN subscription_plans AS p ON p.id = s.plan_id").
		ColumnExpr("p.tier_rank").Where("s.app_id = ? AND s.user_id = ?", appID, userID)
	q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("(s.status = ? AND s.current_period_end > ?)", SubActive, now).
			WhereOr("(s.status = ? AND s.grace_until > ?)", SubPastDue, now).
			WhereOr("(s.status = ? AND s.provider <> ? AND s.provider_ref <> '' AND s.cancel_at_period_end = ? AND s.current_period_end > ?)",
				SubActive, WalletMethod, false, now.Add(-s.GracePeriod()))
	})
	if err := q.Limit(1).Scan(ctx, &rows); err != nil {
		return r, fmt.Errorf("load reader tier: %w", err)
	}
	if len(rows) > 0 {
		r.Member, r.Rank = true, rows[0].Rank
	}
	return r, nil
}

// CanRead is the rule: may reader read a message with this access, whose
// lowest tier has minRank (0 when it names none)?
func CanRead(a MessageAccess, minRank int, r Reader) bool {
	if RoleRank(r.Role) >= RoleRank(RoleModerator) {
		return true
	}
	switch a.Audience {
	case AccessPublic, "":
		return true
	case AccessFollowers:
		return RoleRank(r.Role) >= RoleRank(RoleFollower)
	case AccessMembers:
		if !r.Member {
			return false
		}
		return a.MinTierID == nil || r.Rank >= minRank
	}
	return false
}

// CheckAccess validates an access setting for the app: a known audience,
// and a lowest tier only with MEMBERS, naming one of the app's tiers.
func (s *Storage) CheckAccess(ctx context.Context, appID string, a *MessageAccess) error {
	a.Audience = strings.ToUpper(strings.TrimSpace(a.Audience))
	if a.MinTierID != nil && strings.TrimSpace(*a.MinTierID) == "" {
		a.MinTierID = nil
	}
	switch a.Audience {
	case AccessPublic, AccessFollowers, AccessMembers:
	default:
		return &ErrInvalid{Msg: "access.audience must be PUBLIC, FOLLOWERS or MEMBERS", Field: "access"}
	}
	if a.MinTierID == nil {
		return nil
	}
	if a.Audience != AccessMembers {
		return &ErrInvalid{Msg: "access.minTierId goes with the MEMBERS audience", Field: "access"}
	}
	n, err := s.db.NewSelect().Model((*SubscriptionPlan)(nil)).Where("id = ? AND app_id = ?", *a.MinTierID, appID).Count(ctx)
	if err != nil {
		return fmt.Errorf("check tier: %w", err)
	}
	if n == 0 {
		return &ErrInvalid{Msg: "Tier not found", Field: "access"}
	}
	return nil
}

// LockViews answers views as reader may see them: a message it may not read
// keeps its place, author, date and counts, but its text is the creator's
// teaser (or nothing), its media are only counted (LockedMedia, for a
// placeholder), its replies are gone, and Locked is set with the tier to
// join. views is never changed in place (it may be a cached, shared value).
func LockViews(views []MessageView, r Reader) []MessageView {
	out := make([]MessageView, len(views))
	for i, v := range views {
		out[i] = LockView(v, r)
	}
	return out
}

// LockView is LockViews for one view.
func LockView(v MessageView, r Reader) MessageView {
	if CanRead(v.Access, minRankOf(v.Access, v.AccessTier), r) {
		v.Locked = false
		if len(v.Replies) > 0 {
			v.Replies = LockViews(v.Replies, r)
		}
		return v
	}
	v.Locked = true
	v.Content = v.Teaser
	v.LockedMedia = len(v.Attachments)
	v.Attachments = []AttachmentView{}
	v.Replies = []MessageView{}
	return v
}

// minRankOf is the rank of the lowest tier an access setting names (its
// loaded tier), 0 when it names none; a tier that is gone is for staff only.
func minRankOf(a MessageAccess, tier *AccessTier) int {
	if a.MinTierID == nil {
		return 0
	}
	if tier == nil {
		return missingTierRank
	}
	return tier.Rank
}

// accessOf reads a message's access setting.
func accessOf(m *Message) MessageAccess {
	a := MessageAccess{Audience: m.AccessAudience, MinTierID: m.AccessMinTierID}
	if a.Audience == "" {
		a.Audience = AccessPublic
	}
	return a
}

// AccessTier is the lowest tier a message is for: "Join {name} to unlock".
type AccessTier struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Rank int    `json:"rank"`
}

// tierNamesAndRanks loads the tiers messages name (id -> name, rank).
func tierNamesAndRanks(ctx context.Context, db bun.IDB, ids []string) (map[string]struct {
	Name string
	Rank int
}, error) {
	out := map[string]struct {
		Name string
		Rank int
	}{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID   string `bun:"id"`
		Name string `bun:"name"`
		Rank int    `bun:"tier_rank"`
	}
	if err := db.NewSelect().TableExpr("subscription_plans AS p").Join("JOIN store_items AS i ON i.id = p.store_item_id").
		ColumnExpr("p.id, i.name, p.tier_rank").Where("p.id IN (?)", bun.List(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load message tiers: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = struct {
			Name string
			Rank int
		}{r.Name, r.Rank}
	}
	return out, nil
}

// missingTierRank: a message naming a tier that is gone is for staff only.
const missingTierRank = 1 << 30

// ReadableWhere is CanRead in SQL, for queries that must never match a
// message the reader may not read (search, the Atom feed, the sitemap):
// alias names the messages table in the query.
func ReadableWhere(q *bun.SelectQuery, alias string, r Reader) *bun.SelectQuery {
	if RoleRank(r.Role) >= RoleRank(RoleModerator) {
		return q
	}
	a := alias + "."
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		q = q.Where(a+"access_audience = ?", AccessPublic)
		if RoleRank(r.Role) >= RoleRank(RoleFollower) {
			q = q.WhereOr(a+"access_audience = ?", AccessFollowers)
		}
		if r.Member {
			q = q.WhereOr("("+a+"access_audience = ? AND ("+a+"access_min_tier_id IS NULL OR "+
				"(SELECT tp.tier_rank FROM subscription_plans AS tp WHERE tp.id = "+a+"access_min_tier_id) <= ?))", AccessMembers, r.Rank)
		}
		return q
	})
}

// LockStories is LockViews for the stories strip: a locked story keeps its
// place with no media (a placeholder) and the teaser as its caption.
func LockStories(groups []StoryGroup, r Reader) []StoryGroup {
	out := make([]StoryGroup, len(groups))
	for i, g := range groups {
		out[i] = StoryGroup{User: g.User, Stories: make([]StoryView, len(g.Stories))}
		for j, st := range g.Stories {
			st.MessageView = LockView(st.MessageView, r)
			if st.Locked {
				st.Media = nil
			}
			out[i].Stories[j] = st
		}
	}
	return out
}

// MayReadAccess is CanRead for an access setting (its tier's rank loaded).
func (s *Storage) MayReadAccess(ctx context.Context, a MessageAccess, r Reader) (bool, error) {
	return s.MayRead(ctx, &Message{AccessAudience: a.Audience, AccessMinTierID: a.MinTierID}, r)
}

// MayRead is CanRead for one stored message (its tier's rank loaded).
func (s *Storage) MayRead(ctx context.Context, m *Message, r Reader) (bool, error) {
	minRank := 0
	if m.AccessMinTierID != nil {
		tiers, err := tierNamesAndRanks(ctx, s.db, []string{*m.AccessMinTierID})
		if err != nil {
			return false, err
		}
		minRank = missingTierRank
		if t, ok := tiers[*m.AccessMinTierID]; ok {
			minRank = t.Rank
		}
	}
	return CanRead(accessOf(m), minRank, r), nil
}
