package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// FeedData is what the feed page renders and what its islands refetch: the
// page and GET /api/community/{id}/posts share loadFeed.
type FeedData struct {
	CommunityID string              `json:"communityId"`
	Posts       []store.MessageView `json:"posts"`
	Pagination  store.Pagination    `json:"pagination"`
	Stories     []store.StoryGroup  `json:"stories"`
	Disabled    bool                `json:"disabled"`
	// OpenStory opens a member's stories in the viewer (?story=USER_ID, the
	// strip's links without JavaScript); "" for the page.
	OpenStory string `json:"openStory,omitempty"`
	// StoriesError is SPEC.md's 'Failed to fetch stories': the strip could
	// not be loaded (the posts still show).
	StoriesError string `json:"storiesError,omitempty"`
}

// scopeOfCommunity resolves a community id to its app's scope, or 404s. A
// disabled community answers as missing: its content is not reachable while
// the feature is off.
func (s *Server) scopeOfCommunity(c echo.Context, communityID string) (*Scope, error) {
	com, err := s.store.CommunityByID(c.Request().Context(), communityID)
	if err != nil {
		return nil, wrapLoad(err, "Community not found")
	}
	sc, err := s.scopeOf(c, com.AppID)
	if err != nil {
		return nil, err
	}
	if err := sc.requireFeature(featureCommunity); err != nil {
		return nil, err
	}
	if err := sc.requireUngated(); err != nil {
		return nil, err
	}
	return sc, nil
}

// loadFeed is the one loader of the community feed: a page of posts (or
// stories) of the scope's community, by page number or, when the client
// passes the previous page's pagination.nextCursor as cursor, by keyset so
// that posts added or deleted meanwhile never repeat or skip one.
// byViewer: the JSON call keeps each viewer's place (see below); the page,
// a render shared between viewers, does not.
func (s *Server) loadFeed(c echo.Context, sc *Scope, msgType string, byViewer bool) (*store.MessagePage, error) {
	page, limit, err := pageParams(c, store.DefaultPageSize)
	if err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	cursor := c.QueryParam("cursor")
	// A SPEC client pages by number only (page=2, 3, ... while hasNext).
	// Each page served to a viewer records where it ended, and their next
	// page number starts there (keyset), so a post added or deleted while
	// they read neither repeats nor skips one. Without a record (a first
	// visit to page N) the page is counted by offset.
	mark := ""
	if byViewer {
		mark = feedMark(c, sc, msgType, limit)
	}
	if mark != "" && cursor == "" && page > 1 {
		if b, ok, err := s.store.Cache().Get(ctx, mark+strconv.Itoa(page-1)); err == nil && ok {
			cursor = string(b)
		}
	}
	fp := store.FeedPage{Page: page, Limit: limit, Cursor: cursor, AppID: sc.App.ID}
	p, err := s.store.CommunityFeed(ctx, sc.App.Community.ID, msgType, fp)
	if mark != "" && err == nil && p.Pagination.NextCursor != "" {
		if err := s.store.Cache().Set(ctx, mark+strconv.Itoa(page), []byte(p.Pagination.NextCursor), feedMarkTTL); err != nil {
			s.logger.Warn("remember feed page end", "err", err)
		}
	}
	if err == nil && sc.User != nil {
		// The author sees their own hidden posts in place, marked; such an
		// answer is theirs alone and never cached.
		var own bool
		if p, own, err = s.store.WithOwnHidden(ctx, sc.App.Community.ID, msgType, sc.User.ID, fp, p); own {
			keepPrivate(c, store.HiddenByModerator)
		}
	}
	if err == nil && p != nil {
		// Locked posts reach this viewer as teasers (store.LockViews); the
		// page may be a cached, shared value: copied, never changed.
		locked := *p
		locked.Messages = store.LockViews(p.Messages, sc.Reader)
		p = &locked
	}
	return p, answer(err, nil) // a bad cursor is a 400 (store.ErrInvalid)
}

// feedMarkTTL is how long a viewer's place in a feed is kept.
const feedMarkTTL = 30 * time.Minute

// feedMark names a viewer's reading of one feed: the member, or a visitor
// by address and browser (no cookie is set for it).
func feedMark(c echo.Context, sc *Scope, msgType string, limit int) string {
	who := "u:"
	if sc.User != nil {
		who += sc.User.ID
	} else {
		h := sha256.Sum256([]byte(c.RealIP() + "|" + c.Request().UserAgent()))
		who = "v:" + hex.EncodeToString(h[:12])
	}
	return "feedmark:" + sc.App.Community.ID + ":" + msgType + ":" + strconv.Itoa(limit) + ":" + who + ":"
}

// loadStories is the one loader of the stories strip: the last day's
// stories grouped by user.
func (s *Server) loadStories(c echo.Context, sc *Scope) ([]store.StoryGroup, error) {
	if sc.App.Settings.Features.Community.Settings.StoriesOff {
		return []store.StoryGroup{}, nil // stories are turned off in the studio
	}
	groups, err := s.store.StoriesByUser(c.Request().Context(), sc.App.Community.ID, time.Now().UTC().Add(-store.StoryLifetime))
	if err != nil {
		return nil, err
	}
	// A cached strip drops each story when its day ends.
	for _, g := range groups {
		for _, st := range g.Stories {
			noteChangesAt(c, st.CreatedAt.Add(store.StoryLifetime))
		}
	}
	return store.LockStories(groups, sc.Reader), nil
}

// GET /api/community/:communityId/posts?page&limit=20&type=POST[&cursor]
func (s *Server) apiCommunityPosts(c echo.Context) error {
	sc, err := s.scopeOfCommunity(c, c.Param("communityId"))
	if err != nil {
		return err
	}
	msgType := c.QueryParam("type")
	if msgType == "" {
		msgType = store.MessagePost
	}
	if msgType != store.MessagePost && msgType != store.MessageStory {
		return badRequest("type must be POST or STORY")
	}
	if msgType == store.MessageStory && sc.App.Settings.Features.Community.Settings.StoriesOff {
		empty := store.NewPagination(1, store.DefaultPageSize, 0)
		return respondPage(c, PostsPage{Pagination: empty, Posts: []store.MessageView{}}, empty)
	}
	p, err := s.loadFeed(c, sc, msgType, true)
	if err != nil {
		return err
	}
	return respondPage(c, PostsPage{Pagination: p.Pagination, Posts: p.Messages}, p.Pagination)
}

// GET /api/community/:communityId/stories
func (s *Server) apiCommunityStories(c echo.Context) error {
	sc, err := s.scopeOfCommunity(c, c.Param("communityId"))
	if err != nil {
		return err
	}
	groups, err := s.loadStories(c, sc)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, StoriesData{Users: groups})
}

// GET /apps/:app/community?page[&cursor] renders a page of posts (1 unless
// the Load More link, which carries the cursor, was followed without
// JavaScript) and the stories, so the feed
// works before and without JavaScript.
func (s *Server) pageCommunity(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	data := FeedData{Posts: []store.MessageView{}, Stories: []store.StoryGroup{}}
	if sc.requireFeature(featureCommunity) != nil {
		data.Disabled = true
		props.Data = data
		return s.renderPage(c, "Community", props)
	}
	data.CommunityID = sc.App.Community.ID
	p, err := s.loadFeed(c, sc, store.MessagePost, false)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Status == http.StatusBadRequest {
			return err
		}
		s.logger.Error("feed load failed", "app", sc.App.Name, "err", err)
		props.Error, props.Status = "Failed to fetch posts", http.StatusServiceUnavailable
		props.Data = data
		return s.renderPage(c, "Community", props)
	}
	data.Posts, data.Pagination = p.Messages, p.Pagination
	if id := c.QueryParam("story"); store.LooksLikeID(id) {
		data.OpenStory = id
	}
	if data.Stories, err = s.loadStories(c, sc); err != nil {
		// The strip is secondary: show the posts without it.
		s.logger.Error("stories load failed", "app", sc.App.Name, "err", err)
		data.Stories = []store.StoryGroup{}
		data.StoriesError = "Failed to fetch stories"
		c.Response().Header().Set("Cache-Control", "no-store")
	}
	props.Data = data
	return s.renderPage(c, "Community", props)
}

// PostsPage is data of GET /api/community/:communityId/posts.
type PostsPage struct {
	atTop
	Pagination store.Pagination    `json:"pagination"`
	Posts      []store.MessageView `json:"posts"`
}

// StoriesData is data of GET /api/community/:communityId/stories: the
// stories grouped by their author.
type StoriesData struct {
	atTop
	Users []store.StoryGroup `json:"users"`
}
