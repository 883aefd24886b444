package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Page bounds shared by every paginated message call (SPEC.md section 9).
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	// StoryLifetime is how long a story stays in the strip.
	StoryLifetime = 24 * time.Hour
)

// Pagination is the pagination object of SPEC.md section 3.
type Pagination struct {
	Page       int  `json:"page"`
	Limit      int  `json:"limit"`
	Total      int  `json:"total"`
	TotalPages int  `json:"totalPages"`
	HasNext    bool `json:"hasNext"`
	HasPrev    bool `json:"hasPrev"`
	// NextCursor, on feeds that have a next page, asks for it by keyset
	// (?cursor=) rather than by number: see CommunityFeed.
	NextCursor string `json:"nextCursor,omitempty"`
}

// NewPagination clamps page and limit (limit 1..100, page >= 1) and fills
// the derived fields from total.
func NewPagination(page, limit, total int) Pagination {
	page, limit = ClampPage(page, limit)
	pages := (total + limit - 1) / limit
	return Pagination{Page: page, Limit: limit, Total: total, TotalPages: pages, HasNext: page < pages, HasPrev: page > 1}
}

// ClampPage keeps client paging inside sane bounds.
func ClampPage(page, limit int) (int, int) {
	if page < 1 {
		page = 1
	}
	if limit < 1 {
		limit = DefaultPageSize
	}
	if limit > MaxPageSize {
		limit = MaxPageSize
	}
	return page, limit
}

// MessagePage is one page of messages with its pagination.
type MessagePage struct {
	Messages   []MessageView
	Pagination Pagination
}

// CommunityPosts lists top-level messages of one type (POST by default) in a
// community, newest first, by page number.
func (s *Storage) CommunityPosts(ctx context.Context, communityID, msgType string, page, limit int) (*MessagePage, error) {
	return s.CommunityFeed(ctx, communityID, msgType, FeedPage{Page: page, Limit: limit})
}

// FeedPage asks for one page of a feed: by Cursor (the NextCursor of the
// page before) when set, else by Page number. Page is still echoed back in
// the pagination, so clients that count pages keep working.
type FeedPage struct {
	Page, Limit int
	Cursor      string
	// AppID, when set (the community's app), caches the page per app
	// version (cachedList).
	AppID string
}

// CommunityFeed lists top-level messages of one type in a community, newest
// first. With a cursor the page starts strictly after the last post the
// client saw (keyset pagination on created_at, id), so posts added or
// deleted between loads never make a page repeat or skip a post, and deep
// pages cost what the first does. Without one (page=N) it falls back to
// OFFSET. One more row than asked for tells hasNext without counting; the
// total comes from a cached count (feedTotal).
func (s *Storage) CommunityFeed(ctx context.Context, communityID, msgType string, fp FeedPage) (*MessagePage, error) {
	if fp.AppID == "" {
		return s.communityFeed(ctx, communityID, msgType, fp)
	}
	if fp.Cursor != "" {
		if _, _, err := decodeCursor(fp.Cursor); err != nil {
			return nil, err
		}
	}
	page, limit := ClampPage(fp.Page, fp.Limit)
	key := "feed:" + communityID + ":" + msgType + ":" + strconv.Itoa(page) + ":" + strconv.Itoa(limit) + ":" + fp.Cursor
	v, err := s.CurrentVersions(ctx, fp.AppID)
	if err != nil {
		return s.communityFeed(ctx, communityID, msgType, fp)
	}
	// Like the landing data, in two parts: the posts, kept per content
	// version, and their reactions and reply counts, read again (two small
	// queries, once per process and version) when a like, a reply or a
	// follow moves the engagement version. Keyed by every version, the
	// whole page was rebuilt after each like: at 60 a second, on nearly
	// every call.
	out := new(MessagePage)
	err = s.cachedListAt(ctx, fp.AppID, v.Key(), key, out, func(ctx context.Context) error {
		p, err := s.communityFeed(ctx, communityID, msgType, fp)
		if err == nil {
			*out = *p
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(out.Messages))
	for i, m := range out.Messages {
		ids[i] = m.ID
	}
	counts, err := s.postEngagement(ctx, fp.AppID, v.DataKey(), key, ids)
	if err != nil {
		return nil, err
	}
	out.Messages = counts.applyToPosts(out.Messages)
	return out, nil
}

// postEngagement is the reactions and visible reply counts of the posts of
// one cached list (key) at one engagement version (version), through the
// cache and one read per process at a time.
func (s *Storage) postEngagement(ctx context.Context, appID, version, key string, ids []string) (*landingCounts, error) {
	full := "post-counts:v1:" + appID + ":" + version + ":" + key
	got, err, _ := s.countBuilds.Do(full, func() (any, error) {
		ctx := context.WithoutCancel(ctx) // shared by every caller waiting
		b, ok, cacheErr := s.cache.Get(ctx, full)
		if cacheErr == nil && ok {
			var counts landingCounts
			if err := json.Unmarshal(b, &counts); err == nil {
				return &counts, nil
			}
		}
		counts, err := s.reactionsAndReplies(ctx, ids)
		if err != nil {
			return nil, err
		}
		if b, err := json.Marshal(counts); err == nil && cacheErr == nil {
			if err := s.cache.Set(ctx, full, b, listCacheTTL); err != nil {
				s.cacheWarn("post counts not cached", err, "app", appID)
			}
		}
		return counts, nil
	})
	if err != nil {
		return nil, err
	}
	return got.(*landingCounts), nil
}

func (s *Storage) communityFeed(ctx context.Context, communityID, msgType string, fp FeedPage) (*MessagePage, error) {
	page, limit := ClampPage(fp.Page, fp.Limit)
	var msgs []Message
	q := s.db.NewSelect().Model(&msgs).
		Where("community_id = ? AND type = ? AND parent_message_id IS NULL AND hidden = ''", communityID, msgType).
		OrderExpr("created_at DESC, id DESC").Limit(int64(limit + 1))
	if fp.Cursor != "" {
		at, id, err := decodeCursor(fp.Cursor)
		if err != nil {
			return nil, err
		}
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", at, at, id)
	} else {
		q = q.Offset(int64((page - 1) * limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list posts of community %s: %w", communityID, err)
	}
	hasNext := len(msgs) > limit
	if hasNext {
		msgs = msgs[:limit]
	}
	total, err := s.feedTotal(ctx, communityID, msgType)
	if err != nil {
		return nil, err
	}
	views, err := s.messageViews(ctx, s.db, msgs)
	if err != nil {
		return nil, err
	}
	p := NewPagination(page, limit, total)
	// What the rows say beats the count, which may lag a write.
	p.HasNext = hasNext
	p.HasPrev = page > 1 || fp.Cursor != ""
	if hasNext {
		last := msgs[len(msgs)-1]
		p.NextCursor = encodeCursor(last.CreatedAt, last.ID)
	}
	return &MessagePage{Messages: views, Pagination: p}, nil
}

// ErrBadCursor: a cursor this server did not make (or mangled in transit).
var ErrBadCursor = invalid("cursor is not valid")

// A cursor is the sort key of the last post shown: its created_at (Unix
// nanoseconds: SQLite keeps them, PostgreSQL microseconds) and id,
// base64url so it is opaque and URL-safe.
func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixNano(), 10) + "." + id))
}

func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", ErrBadCursor
	}
	ns, id, ok := strings.Cut(string(b), ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || !LooksLikeID(id) {
		return time.Time{}, "", ErrBadCursor
	}
	return time.Unix(0, n).UTC(), id, nil
}

// feedTotalTTL bounds how stale a feed's total may get through writes this
// process does not see (another process on an in-memory cache, a cascade
// from a deleted account); posting and deleting drop it at once.
const feedTotalTTL = 5 * time.Minute

func feedTotalKey(communityID, msgType string) string {
	return "feed-total:" + communityID + ":" + msgType
}

// feedTotal counts a community's posts of one type through the cache:
// counting 100,000 rows on every page load would cost more than the page.
func (s *Storage) feedTotal(ctx context.Context, communityID, msgType string) (int, error) {
	key := feedTotalKey(communityID, msgType)
	if b, ok, err := s.cache.Get(ctx, key); err == nil && ok {
		if n, err := strconv.Atoi(string(b)); err == nil {
			return n, nil
		}
	}
	n, err := s.db.NewSelect().Model((*Message)(nil)).
		Where("community_id = ? AND type = ? AND parent_message_id IS NULL AND hidden = ''", communityID, msgType).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count posts of community %s: %w", communityID, err)
	}
	if err := s.cache.Set(ctx, key, []byte(strconv.FormatInt(n, 10)), feedTotalTTL); err != nil {
		s.cacheWarn("feed total not cached", err, "community", communityID)
	}
	return int(n), nil
}

// forgetFeedTotal drops the cached total after a post or story is added or
// removed.
func (s *Storage) forgetFeedTotal(ctx context.Context, communityID, msgType string) {
	if err := s.cache.Delete(ctx, feedTotalKey(communityID, msgType)); err != nil {
		s.cacheWarn("feed total not dropped", err, "community", communityID)
	}
}

// Replies lists the replies to a message, oldest first, as a conversation reads.
func (s *Storage) Replies(ctx context.Context, parentID string, page, limit int) (*MessagePage, error) {
	page, limit = ClampPage(page, limit)
	var msgs []Message
	total, err := s.db.NewSelect().Model(&msgs).Where("parent_message_id = ? AND hidden = ''", parentID).
		OrderExpr("created_at ASC, id ASC").Limit(int64(limit)).Offset(int64((page - 1) * limit)).ScanAndCount(ctx)
	if err != nil {
		return nil, fmt.Errorf("list replies of %s: %w", parentID, err)
	}
	views, err := s.messageViews(ctx, s.db, msgs)
	if err != nil {
		return nil, err
	}
	return &MessagePage{Messages: views, Pagination: NewPagination(page, limit, int(total))}, nil
}

// MessageByID loads a raw message, or ErrNotFound.
func (s *Storage) MessageByID(ctx context.Context, id string) (*Message, error) {
	m := new(Message)
	if err := selectOne(ctx, s.db.NewSelect().Model(m).Where("id = ?", id), "message "+id); err != nil {
		return nil, err
	}
	return m, nil
}

// MessageView hydrates one message; with replies it also carries the first
// page of replies (up to limit).
func (s *Storage) MessageView(ctx context.Context, m *Message, replies int) (*MessageView, error) {
	views, err := s.messageViews(ctx, s.db, []Message{*m})
	if err != nil {
		return nil, err
	}
	v := views[0]
	if replies > 0 {
		p, err := s.Replies(ctx, m.ID, 1, replies)
		if err != nil {
			return nil, err
		}
		v.Replies = p.Messages
	}
	return &v, nil
}

// ReactionsOf lists the reactions to a message in the order they were given.
func (s *Storage) ReactionsOf(ctx context.Context, messageID string) ([]ReactionView, error) {
	var rows []Reaction
	if err := s.db.NewSelect().Model(&rows).Where("message_id = ?", messageID).
		OrderExpr("created_at ASC, id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list reactions of %s: %w", messageID, err)
	}
	out := make([]ReactionView, len(rows))
	for i, r := range rows {
		out[i] = ReactionView{ID: r.ID, Reaction: r.Reaction, MediaID: r.MediaID, Sender: ReactionUser{ID: r.SenderID}}
	}
	return out, nil
}

// StoryView is a story as the viewer plays it (SPEC.md section 3): the first
// attachment is lifted to Media.
type StoryView struct {
	MessageView
	Media *MediaView  `json:"media"`
	User  UserSummary `json:"user"`
}

// StoryGroup is one user's stories, oldest first.
type StoryGroup struct {
	User    UserSummary `json:"user"`
	Stories []StoryView `json:"stories"`
}

// StoriesByUser groups the community's stories since `since` by author.
// Authors are ordered by their newest story, so fresh stories come first;
// users without stories never appear.
func (s *Storage) StoriesByUser(ctx context.Context, communityID string, since time.Time) ([]StoryGroup, error) {
	var msgs []Message
	if err := s.db.NewSelect().Model(&msgs).
		Where("community_id = ? AND type = ? AND created_at >= ? AND hidden = ''", communityID, MessageStory, since).
		OrderExpr("created_at DESC, id DESC").Limit(int64(500)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list stories of community %s: %w", communityID, err)
	}
	views, err := s.messageViews(ctx, s.db, msgs)
	if err != nil {
		return nil, err
	}
	groups := []StoryGroup{}
	index := map[string]int{}
	for _, v := range views {
		i, ok := index[v.SenderID]
		if !ok {
			i = len(groups)
			index[v.SenderID] = i
			groups = append(groups, StoryGroup{User: v.Sender, Stories: []StoryView{}})
		}
		st := StoryView{MessageView: v, User: v.Sender}
		if len(v.Attachments) > 0 {
			m := v.Attachments[0].Media
			st.Media = &m
		}
		// views are newest first; prepend so each user's stories play in order.
		groups[i].Stories = append([]StoryView{st}, groups[i].Stories...)
	}
	return groups, nil
}

// CommunityByID loads a community row, or ErrNotFound.
func (s *Storage) CommunityByID(ctx context.Context, id string) (*Community, error) {
	c := new(Community)
	if err := selectOne(ctx, s.db.NewSelect().Model(c).Where("id = ?", id), "community "+id); err != nil {
		return nil, err
	}
	return c, nil
}

// WithOwnHidden adds to a feed page the viewer's own hidden posts (or
// stories) that belong between its first and last post, marked by their
// Hidden reason: the author sees what moderators hid or hold, in its place,
// while nobody else does (the page itself, shared through the cache, never
// holds them). added says whether any were, so the caller keeps that answer
// out of shared caches.
func (s *Storage) WithOwnHidden(ctx context.Context, communityID, msgType, userID string, fp FeedPage, p *MessagePage) (*MessagePage, bool, error) {
	q := s.db.NewSelect().Model((*Message)(nil)).
		Where("community_id = ? AND type = ? AND parent_message_id IS NULL AND hidden <> '' AND sender_id = ?", communityID, msgType, userID)
	if msgType == MessageStory {
		q = q.Where("created_at >= ?", time.Now().UTC().Add(-StoryLifetime))
	}
	page, limit := ClampPage(fp.Page, fp.Limit)
	switch {
	case fp.Cursor != "":
		at, id, err := decodeCursor(fp.Cursor)
		if err != nil {
			return nil, false, err
		}
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", at, at, id)
	case page > 1 && len(p.Messages) > 0:
		q = q.Where("created_at <= ?", p.Messages[0].CreatedAt)
	case page > 1:
		return p, false, nil
	}
	if p.Pagination.HasNext && len(p.Messages) > 0 {
		q = q.Where("created_at >= ?", p.Messages[len(p.Messages)-1].CreatedAt)
	}
	var own []Message
	if err := q.Model(&own).OrderExpr("created_at DESC, id DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, false, fmt.Errorf("list own hidden posts: %w", err)
	}
	if len(own) == 0 {
		return p, false, nil
	}
	views, err := s.messageViews(ctx, s.db, own)
	if err != nil {
		return nil, false, err
	}
	merged := make([]MessageView, 0, len(p.Messages)+len(views))
	merged = append(merged, p.Messages...)
	merged = append(merged, views...)
	sort.SliceStable(merged, func(i, j int) bool {
		if !merged[i].CreatedAt.Equal(merged[j].CreatedAt) {
			return merged[i].CreatedAt.After(merged[j].CreatedAt)
		}
		return merged[i].ID > merged[j].ID
	})
	out := *p
	out.Messages = merged
	return &out, true, nil
}

// HasHiddenPosts reports whether the member wrote a post or story of the
// app that is hidden: their feed is then theirs alone (WithOwnHidden).
func (s *Storage) HasHiddenPosts(ctx context.Context, appID, userID string) (bool, error) {
	ok, err := s.db.NewSelect().Model((*Message)(nil)).
		Where("app_id = ? AND sender_id = ? AND hidden <> '' AND parent_message_id IS NULL", appID, userID).Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("check hidden posts: %w", err)
	}
	return ok, nil
}

// reactionsAndReplies reads the reactions and the visible reply counts of
// the posts ids: the engagement the feed and the landing page lay over
// their cached posts.
func (s *Storage) reactionsAndReplies(ctx context.Context, ids []string) (*landingCounts, error) {
	counts := &landingCounts{Reactions: map[string][]ReactionView{}, Replies: map[string]int{}}
	if len(ids) == 0 {
		return counts, nil
	}
	var reactions []Reaction
	if err := s.db.NewSelect().Model(&reactions).Where("message_id IN (?)", bun.List(ids)).
		Order("created_at ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load reactions: %w", err)
	}
	for _, r := range reactions {
		counts.Reactions[r.MessageID] = append(counts.Reactions[r.MessageID],
			ReactionView{ID: r.ID, Reaction: r.Reaction, MediaID: r.MediaID, Sender: ReactionUser{ID: r.SenderID}})
	}
	var replies []struct {
		ParentMessageID string `bun:"parent_message_id"`
		N               int    `bun:"n"`
	}
	if err := s.db.NewSelect().Model((*Message)(nil)).ColumnExpr("parent_message_id, COUNT(*) AS n").
		Where("parent_message_id IN (?) AND hidden = ''", bun.List(ids)).Group("parent_message_id").
		Scan(ctx, &replies); err != nil {
		return nil, fmt.Errorf("count replies: %w", err)
	}
	for _, r := range replies {
		counts.Replies[r.ParentMessageID] = r.N
	}
	return counts, nil
}
