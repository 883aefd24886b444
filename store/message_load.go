package store

import (
	"context"
	"fmt"
	"time"
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
// community, newest first.
func (s *Storage) CommunityPosts(ctx context.Context, communityID, msgType string, page, limit int) (*MessagePage, error) {
	page, limit = ClampPage(page, limit)
	var msgs []Message
	total, err := s.DB.NewSelect().Model(&msgs).
		Where("community_id = ? AND type = ? AND parent_message_id IS NULL", communityID, msgType).
		OrderExpr("created_at DESC, id DESC").Limit(int64(limit)).Offset(int64((page - 1) * limit)).ScanAndCount(ctx)
	if err != nil {
		return nil, fmt.Errorf("list posts of community %s: %w", communityID, err)
	}
	views, err := s.messageViews(ctx, s.DB, msgs)
	if err != nil {
		return nil, err
	}
	return &MessagePage{Messages: views, Pagination: NewPagination(page, limit, int(total))}, nil
}

// Replies lists the replies to a message, oldest first, as a conversation reads.
func (s *Storage) Replies(ctx context.Context, parentID string, page, limit int) (*MessagePage, error) {
	page, limit = ClampPage(page, limit)
	var msgs []Message
	total, err := s.DB.NewSelect().Model(&msgs).Where("parent_message_id = ?", parentID).
		OrderExpr("created_at ASC, id ASC").Limit(int64(limit)).Offset(int64((page - 1) * limit)).ScanAndCount(ctx)
	if err != nil {
		return nil, fmt.Errorf("list replies of %s: %w", parentID, err)
	}
	views, err := s.messageViews(ctx, s.DB, msgs)
	if err != nil {
		return nil, err
	}
	return &MessagePage{Messages: views, Pagination: NewPagination(page, limit, int(total))}, nil
}

// MessageByID loads a raw message, or ErrNotFound.
func (s *Storage) MessageByID(ctx context.Context, id string) (*Message, error) {
	m := new(Message)
	if err := selectOne(ctx, s.DB.NewSelect().Model(m).Where("id = ?", id), "message "+id); err != nil {
		return nil, err
	}
	return m, nil
}

// MessageView hydrates one message; with replies it also carries the first
// page of replies (up to limit).
func (s *Storage) MessageView(ctx context.Context, m *Message, replies int) (*MessageView, error) {
	views, err := s.messageViews(ctx, s.DB, []Message{*m})
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
	if err := s.DB.NewSelect().Model(&rows).Where("message_id = ?", messageID).
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
	if err := s.DB.NewSelect().Model(&msgs).
		Where("community_id = ? AND type = ? AND created_at >= ?", communityID, MessageStory, since).
		OrderExpr("created_at DESC, id DESC").Limit(int64(500)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list stories of community %s: %w", communityID, err)
	}
	views, err := s.messageViews(ctx, s.DB, msgs)
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
	if err := selectOne(ctx, s.DB.NewSelect().Model(c).Where("id = ?", id), "community "+id); err != nil {
		return nil, err
	}
	return c, nil
}
