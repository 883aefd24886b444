package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// PostData is the post page's data: the post and its first comments.
type PostData struct {
	Post       *store.MessageView  `json:"post"`
	Replies    []store.MessageView `json:"replies"`
	Pagination store.Pagination    `json:"pagination"`
}

// GET /apps/:app/posts/:postId. A post of another app, a story or a reply
// is 'Post not found' here, with a 404 status.
func (s *Server) pagePost(c echo.Context) error {
	view, ac := appOf(c)
	props := s.pageProps(c, view, ac)
	ctx := c.Request().Context()
	m, err := s.store.MessageByID(ctx, c.Param("postId"))
	if err == nil && (m.AppID != view.ID || m.Type != store.MessagePost || !view.Settings.Features.Community.Enabled) {
		err = store.ErrNotFound
	}
	var post *store.MessageView
	var replies *store.MessagePage
	if err == nil {
		post, err = s.store.MessageView(ctx, m, 0)
	}
	if err == nil {
		replies, err = s.store.Replies(ctx, m.ID, 1, CommentsPageSize)
	}
	if err != nil {
		props.Error, props.Status = "Post not found", http.StatusNotFound
		if !errors.Is(err, store.ErrNotFound) {
			s.logger.Error("post load failed", "post", c.Param("postId"), "err", err)
			props.Error, props.Status = "Failed to fetch post", http.StatusServiceUnavailable
		}
		props.Data = PostData{Replies: []store.MessageView{}}
		return s.renderPage(c, "Post", props)
	}
	props.Data = PostData{Post: post, Replies: replies.Messages, Pagination: replies.Pagination}
	return s.renderPage(c, "Post", props)
}

// CreateData tells the create pages where to post.
type CreateData struct {
	CommunityID string `json:"communityId"`
}

// GET /apps/:app/create-post and /apps/:app/create-story. The form itself
// checks permissions for display; the API enforces them.
func (s *Server) pageCreate(page string) echo.HandlerFunc {
	return func(c echo.Context) error {
		view, ac := appOf(c)
		props := s.pageProps(c, view, ac)
		data := CreateData{}
		if view.Community != nil && view.Settings.Features.Community.Enabled {
			data.CommunityID = view.Community.ID
		}
		props.Data = data
		return s.renderPage(c, page, props)
	}
}
