package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// CommentsPageSize is how many comments the post page loads (SPEC.md section 9).
const CommentsPageSize = 50

// scopeOfMessage loads a message with its community scope, or 404s.
func (s *Server) scopeOfMessage(c echo.Context, id string) (*store.Message, *communityScope, error) {
	ctx := c.Request().Context()
	m, err := s.store.MessageByID(ctx, id)
	if err != nil {
		return nil, nil, wrapLoad(err, "Post not found")
	}
	com, err := s.store.CommunityByID(ctx, m.CommunityID)
	if err != nil {
		return nil, nil, wrapLoad(err, "Post not found")
	}
	sc, err := s.scopeOfApp(c, com)
	if err != nil {
		return nil, nil, err
	}
	return m, sc, nil
}

// GET /api/messages/:id?include=...,replies
func (s *Server) apiMessage(c echo.Context) error {
	m, _, err := s.scopeOfMessage(c, c.Param("id"))
	if err != nil {
		return err
	}
	replies := 0
	if strings.Contains(c.QueryParam("include"), "replies") {
		replies = CommentsPageSize
	}
	view, err := s.store.MessageView(c.Request().Context(), m, replies)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "data": view})
}

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
	m, _, err := s.scopeOfMessage(c, parentID)
	if err != nil {
		return err
	}
	page, limit := pageParams(c, store.DefaultPageSize)
	p, err := s.store.Replies(c.Request().Context(), m.ID, page, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{
		"success": true, "data": map[string]any{"replies": p.Messages, "messages": p.Messages, "pagination": p.Pagination},
		"replies": p.Messages, "pagination": p.Pagination,
	})
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
	if !store.CanDeleteMessage(sc.ac.Role, m.SenderID == user.ID) {
		return forbidden("You cannot delete this message")
	}
	if err := s.store.DeleteMessage(c.Request().Context(), m); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "message": "Message deleted"})
}
