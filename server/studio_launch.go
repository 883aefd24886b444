package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
)

// sectionLaunch is the studio's launch checklist (issue 43 item 1): each
// step done or not as the app's data says (store.LaunchOf), a link to the
// screen that does it, previews as a visitor and as a member, and Publish
// (Unpublish once published), as plain forms.
const sectionLaunch = "launch"

// GET /apps/:app/studio/launch
func (s *Server) pageStudioLaunch(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	l, err := s.store.LaunchOf(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionLaunch, Launch: l}, http.StatusOK)
}

// POST /apps/:app/studio/launch (action: publish or unpublish). Doing
// what is done already changes nothing and says so alike.
func (s *Server) formStudioLaunch(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	var published bool
	switch c.FormValue("action") {
	case "publish":
		published = true
	case "unpublish":
	default:
		return badRequest("Publish or unpublish the app")
	}
	if err := s.setPublished(c, sc, published); err != nil {
		return err
	}
	notice := "published"
	if !published {
		notice = "unpublished"
	}
	return studioBack(c, sc, "/launch", notice)
}

func (s *Server) setPublished(c echo.Context, sc *Scope, published bool) error {
	if !access.CanPublish(sc.Role) {
		return forbidden(msgStudioOnly)
	}
	_, err := s.store.SetAppPublished(c.Request().Context(), sc.App.ID, sc.User.ID, published)
	return err
}

// GET /api/studio/apps/:appId/launch: the checklist.
func (s *Server) apiStudioLaunch(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	l, err := s.store.LaunchOf(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, l)
}

// PUT /api/studio/apps/:appId/launch {"published": bool}: publishes or
// unpublishes the app and answers the checklist.
func (s *Server) apiStudioSetLaunch(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var req struct {
		Published *bool `json:"published"`
	}
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if req.Published == nil {
		return fieldError("published", "Say whether the app is published (true or false)")
	}
	if err := s.setPublished(c, sc, *req.Published); err != nil {
		return err
	}
	l, err := s.store.LaunchOf(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, l)
}
