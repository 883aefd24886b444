package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// FeedData is what the feed page renders and what its islands refetch.
type FeedData struct {
	CommunityID string              `json:"communityId"`
	Posts       []store.MessageView `json:"posts"`
	Pagination  store.Pagination    `json:"pagination"`
	Stories     []store.StoryGroup  `json:"stories"`
	Disabled    bool                `json:"disabled"`
}

// communityScope is a community with the app it belongs to and the viewer's
// role there: every community and message call starts from one.
type communityScope struct {
	community *store.Community
	app       *store.AppView
	ac        *AppContext
}

// scopeOfCommunity resolves a community id, or 404s. A disabled community
// answers as missing: its content is not reachable while the feature is off.
func (s *Server) scopeOfCommunity(c echo.Context, communityID string) (*communityScope, error) {
	com, err := s.store.CommunityByID(c.Request().Context(), communityID)
	if err != nil {
		return nil, wrapLoad(err, "Community not found")
	}
	return s.scopeOfApp(c, com)
}

func (s *Server) scopeOfApp(c echo.Context, com *store.Community) (*communityScope, error) {
	view, err := s.loadLanding(c, com.AppID)
	if err != nil {
		return nil, err
	}
	if !view.Settings.Features.Community.Enabled {
		return nil, notFound("This app doesn't have community features enabled.")
	}
	ac, err := s.appContext(c, view.ID, view.Settings)
	if err != nil {
		return nil, err
	}
	return &communityScope{community: com, app: view, ac: ac}, nil
}

func pageParams(c echo.Context, defaultLimit int) (int, int) {
	page, _ := strconv.Atoi(c.QueryParam("page"))
	limit, err := strconv.Atoi(c.QueryParam("limit"))
	if err != nil {
		limit = defaultLimit
	}
	return store.ClampPage(page, limit)
}

// GET /api/community/:communityId/posts?page&limit=20&type=POST
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
	page, limit := pageParams(c, store.DefaultPageSize)
	p, err := s.store.CommunityPosts(c.Request().Context(), sc.community.ID, msgType, page, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{
		"success": true, "data": map[string]any{"posts": p.Messages, "pagination": p.Pagination},
		"posts": p.Messages, "pagination": p.Pagination,
	})
}

// GET /api/community/:communityId/stories answers the stories of the last
// day grouped by user.
func (s *Server) apiCommunityStories(c echo.Context) error {
	sc, err := s.scopeOfCommunity(c, c.Param("communityId"))
	if err != nil {
		return err
	}
	groups, err := s.store.StoriesByUser(c.Request().Context(), sc.community.ID, time.Now().UTC().Add(-store.StoryLifetime))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "data": map[string]any{"users": groups}, "users": groups})
}

// GET /apps/:app/community?page renders a page of posts (1 unless the Load
// More link was followed without JavaScript) and the stories, so the feed
// works before and without JavaScript.
func (s *Server) pageCommunity(c echo.Context) error {
	view, ac := appOf(c)
	props := s.pageProps(c, view, ac)
	data := FeedData{Posts: []store.MessageView{}, Stories: []store.StoryGroup{}}
	if !view.Settings.Features.Community.Enabled || view.Community == nil {
		data.Disabled = true
		props.Data = data
		return s.renderPage(c, "Community", props)
	}
	ctx := c.Request().Context()
	data.CommunityID = view.Community.ID
	page, limit := pageParams(c, store.DefaultPageSize)
	p, err := s.store.CommunityPosts(ctx, data.CommunityID, store.MessagePost, page, limit)
	if err != nil {
		s.logger.Error("feed load failed", "app", view.Name, "err", err)
		props.Error, props.Status = "Failed to fetch posts", http.StatusServiceUnavailable
		props.Data = data
		return s.renderPage(c, "Community", props)
	}
	data.Posts, data.Pagination = p.Messages, p.Pagination
	if data.Stories, err = s.store.StoriesByUser(ctx, data.CommunityID, time.Now().UTC().Add(-store.StoryLifetime)); err != nil {
		// The strip is secondary: show the posts without it.
		s.logger.Error("stories load failed", "app", view.Name, "err", err)
		data.Stories = []store.StoryGroup{}
	}
	props.Data = data
	return s.renderPage(c, "Community", props)
}
