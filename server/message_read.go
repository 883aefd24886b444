package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// CommentsPageSize is how many comments the post page loads (SPEC.md section 9).
const CommentsPageSize = 50

// PostData is the post page's data and GET /api/messages/{id}'s: the post,
// its first comments, and what the viewer may do with it.
type PostData struct {
	Post       *store.MessageView  `json:"post"`
	Replies    []store.MessageView `json:"replies"`
	Pagination store.Pagination    `json:"pagination"`
	CanDelete  bool                `json:"canDelete"`
	// CanPublish: a draft or a scheduled post the viewer may publish now;
	// Schedule says when a scheduled one goes out, in the app's time zone.
	CanPublish bool   `json:"canPublish"`
	Schedule   string `json:"schedule,omitempty"`
	// CommentsError is SPEC.md's 'Failed to fetch comments': the post is
	// shown, its comments could not be loaded.
	CommentsError string `json:"commentsError,omitempty"`
}

// scopeOfMessage loads a message with its app's scope, or 404s.
func (s *Server) scopeOfMessage(c echo.Context, id string) (*store.Message, *Scope, error) {
	m, err := s.store.MessageByID(c.Request().Context(), id)
	if err != nil {
		return nil, nil, wrapLoad(err, "Post not found")
	}
	sc, err := s.scopeOf(c, m.AppID)
	if err != nil {
		return nil, nil, err
	}
	if err := sc.requireFeature(featureCommunity); err != nil {
		return nil, nil, err
	}
	if err := sc.requireUngated(); err != nil {
		return nil, nil, err
	}
	if !sc.sees(m.Hidden, m.SenderID) {
		return nil, nil, notFound("Post not found")
	}
	keepPrivate(c, m.Hidden)
	return m, sc, nil
}

// loadPost is the one loader of a post: the page and the JSON call share it.
// replies is how many comments to load with it (0 for none).
func (s *Server) loadPost(c echo.Context, sc *Scope, m *store.Message, replies int) (*PostData, error) {
	ctx := c.Request().Context()
	full, err := s.store.MessageView(ctx, m, 0)
	if err != nil {
		return nil, err
	}
	// A post this viewer may not read is its teaser (store.LockView).
	locked := store.LockView(*full, sc.Reader)
	view := &locked
	data := &PostData{Post: view, Replies: []store.MessageView{},
		CanDelete: access.CanDeleteMessage(sc.Role, sc.User != nil && sc.User.ID == m.SenderID)}
	if store.Unpublished(m.Hidden) {
		data.CanPublish = access.CanSchedulePosts(sc.Role)
		if m.PublishAt != nil {
			loc := sc.App.Settings.Basic.Location()
			data.Schedule = m.PublishAt.In(loc).Format("Mon Jan 2, 2006 at 3:04 PM") + " (" + loc.String() + ")"
		}
	}
	if replies > 0 && !view.Locked {
		p, err := s.store.Replies(ctx, m.ID, 1, replies)
		if err != nil {
			return nil, err
		}
		data.Replies, data.Pagination = p.Messages, p.Pagination
		view.Replies = p.Messages
	}
	return data, nil
}

// GET /api/messages/:id?include=...,replies answers the message in data,
// with its first comments in data.replies when asked.
func (s *Server) apiMessage(c echo.Context) error {
	m, sc, err := s.scopeOfMessage(c, c.Param("id"))
	if err != nil {
		return err
	}
	replies := 0
	if strings.Contains(c.QueryParam("include"), "replies") {
		replies = CommentsPageSize
	}
	data, err := s.loadPost(c, sc, m, replies)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, data.Post)
}

// GET /apps/:app/posts/:postId. A post of another app, a story or a reply
// is 'Post not found' here, with a 404 status.
func (s *Server) pagePost(c echo.Context) error {
	sc := scopeFromPage(c)
	props := s.pageProps(c, sc)
	m, err := s.store.MessageByID(c.Request().Context(), c.Param("postId"))
	if err == nil && (!sc.contains(m.AppID) || m.Type != store.MessagePost || sc.requireFeature(featureCommunity) != nil ||
		!sc.sees(m.Hidden, m.SenderID)) {
		err = store.ErrNotFound
	}
	if err == nil {
		keepPrivate(c, m.Hidden)
	}
	var data *PostData
	if err == nil {
		data, err = s.loadPost(c, sc, m, 0)
	}
	if err == nil {
		// The comments are the post's second part: when they fail, the
		// post still shows, with the reason where they would be.
		if data.Post.Locked {
			// Comments are part of what the post's audience reads.
		} else if p, rerr := s.store.Replies(c.Request().Context(), m.ID, 1, CommentsPageSize); rerr != nil {
			s.logger.Error("comments load failed", "post", m.ID, "err", rerr)
			data.CommentsError = "Failed to fetch comments"
			c.Response().Header().Set("Cache-Control", "no-store")
		} else {
			data.Replies, data.Pagination = p.Messages, p.Pagination
			data.Post.Replies = p.Messages
		}
	}
	if err != nil {
		props.Error, props.Status = "Post not found", http.StatusNotFound
		if !isNotFound(err) {
			s.logger.Error("post load failed", "post", c.Param("postId"), "err", err)
			props.Error, props.Status = "Failed to fetch post", http.StatusServiceUnavailable
		}
		props.Data = PostData{Replies: []store.MessageView{}}
		return s.renderPage(c, "Post", props)
	}
	props.Data = data
	return s.renderPage(c, "Post", props)
}

// msgLockedPost: the post is for an audience the viewer is not in.
const msgLockedPost = "This post is for members: join to read it"

// GET /api/messages/:id/replies?page=1&limit=50
func (s *Server) apiMessageReplies(c echo.Context) error {
	return s.answerReplies(c, c.Param("id"))
}

// GET /api/messages?parentMessageId=&page&limit&type=REPLY
func (s *Server) apiMessages(c echo.Context) error {
	parent := c.QueryParam("parentMessageId")
	if parent == "" {
		return badRequest("parentMessageId is required")
	}
	if t := c.QueryParam("type"); t != "" && t != store.MessageReply {
		return badRequest("type must be REPLY")
	}
	return s.answerReplies(c, parent)
}

func (s *Server) answerReplies(c echo.Context, parentID string) error {
	m, sc, err := s.scopeOfMessage(c, parentID)
	if err != nil {
		return err
	}
	if ok, err := s.store.MayRead(c.Request().Context(), m, sc.Reader); err != nil {
		return err
	} else if !ok {
		return forbidden(msgLockedPost)
	}
	page, limit, err := pageParams(c, store.DefaultPageSize)
	if err != nil {
		return err
	}
	p, err := s.store.Replies(c.Request().Context(), m.ID, page, limit)
	if err != nil {
		return err
	}
	return respondPage(c, RepliesPage{Messages: p.Messages, Pagination: p.Pagination, Replies: p.Messages}, p.Pagination)
}

// DELETE /api/messages/:id: the author, moderators and above.
func (s *Server) apiDeleteMessage(c echo.Context) error {
	user, err := requireUser(c)
	if err != nil {
		return err
	}
	m, sc, err := s.scopeOfMessage(c, c.Param("id"))
	if err != nil {
		return err
	}
	if !access.CanDeleteMessage(sc.Role, m.SenderID == user.ID) {
		return forbidden("You cannot delete this message")
	}
	if err := s.store.DeleteMessage(c.Request().Context(), m); err != nil {
		return err
	}
	return respondDone(c, "Message deleted")
}

// RepliesPage is data of GET /api/messages/:id/replies; the replies are
// under both names clients read.
type RepliesPage struct {
	atTop
	Messages   []store.MessageView `json:"messages"`
	Pagination store.Pagination    `json:"pagination"`
	Replies    []store.MessageView `json:"replies"`
}
