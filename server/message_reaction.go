package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// GET /api/messages/:id/reactions
func (s *Server) apiReactions(c echo.Context) error {
	m, _, err := s.scopeOfMessage(c, c.Param("id"))
	if err != nil {
		return err
	}
	list, err := s.store.ReactionsOf(c.Request().Context(), m.ID)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, list)
}

// POST /api/messages/:id/reactions {reaction, mediaId}
func (s *Server) apiAddReaction(c echo.Context) error {
	user, err := requireUser(c)
	if err != nil {
		return err
	}
	var req struct {
		Reaction string  `json:"reaction"`
		MediaID  *string `json:"mediaId"`
	}
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	reaction, ok := store.NormalizeReaction(req.Reaction)
	if !ok {
		return badRequest("Only the heart reaction is supported")
	}
	m, sc, err := s.scopeOfMessage(c, c.Param("id"))
	if err != nil {
		return err
	}
	if err := mayReact(sc); err != nil {
		return err
	}
	if req.MediaID != nil && *req.MediaID == "" {
		req.MediaID = nil
	}
	if req.MediaID != nil {
		// A reaction may point at one of the message's own attachments only.
		view, err := s.store.MessageView(c.Request().Context(), m, 0)
		if err != nil {
			return err
		}
		found := false
		for _, a := range view.Attachments {
			found = found || a.MediaID == *req.MediaID
		}
		if !found {
			return badRequest("Media is not part of this message")
		}
	}
	if err := s.limitWrite(c, "reaction", user.ID); err != nil {
		return err
	}
	r, err := s.store.AddReaction(c.Request().Context(), m, user.ID, reaction, req.MediaID)
	if err != nil {
		return err
	}
	return respond(c, http.StatusCreated, r)
}

// DELETE /api/messages/:id/reactions/:reactionId removes your own reaction.
func (s *Server) apiRemoveReaction(c echo.Context) error {
	user, err := requireUser(c)
	if err != nil {
		return err
	}
	m, _, err := s.scopeOfMessage(c, c.Param("id"))
	if err != nil {
		return err
	}
	if err := s.limitWrite(c, "reaction", user.ID); err != nil {
		return err
	}
	err = s.store.RemoveReaction(c.Request().Context(), m, c.Param("reactionId"), user.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Already gone: removing twice (a retried click) is not an error.
		return respondDone(c, "Reaction removed")
	case err != nil:
		return answer(err, wording{store.ErrForbidden: "You can only remove your own reaction"})
	}
	return respondDone(c, "Reaction removed")
}

// mayReact is the rule for adding a reaction, for the API and the form.
func mayReact(sc *Scope) error {
	if sc.Can.CanReact {
		return nil
	}
	if !sc.App.Settings.Features.Community.Settings.AllowReactions {
		return forbidden("Reactions are turned off in this app")
	}
	return forbidden("Follow this app to react")
}
