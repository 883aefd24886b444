package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

const (
	msgAppSuspended  = "This app is suspended"
	msgAppNotFound   = "App not found"
	msgAppNameTaken  = "This app name is taken"
	msgSelfServeOff  = "Apps are created by the operator on this site"
	msgAppNameIsFree = "Available"
)

// AppsIndexData is the /apps page: the creator-template placeholder, and
// for a signed-in user the apps they run and, when self-serve is on, the
// Create your app form (with what was typed and why it was refused).
type AppsIndexData struct {
	SignedIn    bool               `json:"signedIn"`
	SelfServe   bool               `json:"selfServe"`
	Apps        []store.ManagedApp `json:"apps"`
	Name        string             `json:"name"`
	DisplayName string             `json:"displayName"`
	Error       string             `json:"error"`
	Fields      map[string]string  `json:"fields"`
	// Deleted names the app its creator just deleted from the studio.
	Deleted string `json:"deleted,omitempty"`
}

// AppAvailability answers the live name check.
type AppAvailability struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Message   string `json:"message"`
}

// CreatedApp answers POST /api/apps.
type CreatedApp struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	StudioURL string `json:"studioUrl"`
}

// GET /apps
func (s *Server) pageAppsIndex(c echo.Context) error {
	d := AppsIndexData{}
	if name := c.QueryParam("deleted"); len(name) <= 64 {
		d.Deleted = name
	}
	return s.renderAppsIndex(c, d, http.StatusOK)
}

func (s *Server) renderAppsIndex(c echo.Context, d AppsIndexData, status int) error {
	props := s.pageProps(c, nil)
	u := viewerOf(c).User
	d.SignedIn, d.SelfServe, d.Apps = u != nil, !s.cfg.DisableSelfServe, []store.ManagedApp{}
	if d.Fields == nil {
		d.Fields = map[string]string{}
	}
	if u != nil {
		apps, err := s.store.ManagedApps(c.Request().Context(), u.ID)
		if err != nil {
			return err
		}
		d.Apps = apps
	}
	props.Data, props.Status = d, status
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.renderPage(c, "AppsIndex", props)
}

// createApp is the one path of both the form and the JSON call.
func (s *Server) createApp(c echo.Context, name, displayName string) (*store.App, error) {
	u, err := requireUser(c)
	if err != nil {
		return nil, err
	}
	if !access.CanCreateApp(true, !s.cfg.DisableSelfServe) {
		return nil, forbidden(msgSelfServeOff)
	}
	// One account cannot create apps without end (issue 41 item 10).
	app, err := s.store.CreateAppWith(c.Request().Context(), store.NewApp{Name: strings.TrimSpace(name), DisplayName: displayName, CreatorID: u.ID,
		MaxPerDay: s.limits.Apps.Limit})
	if errors.Is(err, store.ErrTooManyApps) {
		c.Response().Header().Set("Retry-After", "3600")
		return nil, errorf(http.StatusTooManyRequests, fmt.Sprintf("You can create %d apps a day. Please try again tomorrow.", s.limits.Apps.Limit))
	}
	if errors.Is(err, store.ErrAppNameTaken) {
		return nil, &Error{Status: http.StatusConflict, Message: msgAppNameTaken, Fields: map[string]string{"name": msgAppNameTaken}}
	}
	return app, answer(err, nil)
}

// POST /apps: the Create your app form. The creator lands in the studio.
func (s *Server) formCreateApp(c echo.Context) error {
	if viewerOf(c).User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin")
	}
	name, display := c.FormValue("name"), c.FormValue("displayName")
	app, err := s.createApp(c, name, display)
	if e := refusal(err, nil); e != nil {
		return s.renderAppsIndex(c, AppsIndexData{Name: name, DisplayName: display, Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/apps/"+url.PathEscape(app.Name)+"/studio/launch?notice=created")
}

// POST /api/apps {name, displayName}
func (s *Server) apiCreateApp(c echo.Context) error {
	var req struct {
		Name        string `json:"name"`
		DisplayName string `json:"displayName"`
	}
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	app, err := s.createApp(c, req.Name, req.DisplayName)
	if err != nil {
		return err
	}
	return respond(c, http.StatusCreated, CreatedApp{ID: app.ID, Name: app.Name, StudioURL: "/apps/" + app.Name + "/studio"})
}

// GET /api/apps/availability?name= : the live check of the create form,
// by the same rules as creating (and the CLI).
func (s *Server) apiAppAvailability(c echo.Context) error {
	if _, err := requireUser(c); err != nil {
		return err
	}
	name := strings.TrimSpace(c.QueryParam("name"))
	out := AppAvailability{Name: name, Available: true, Message: msgAppNameIsFree}
	err := s.store.AppNameAvailable(c.Request().Context(), name)
	var inv *store.ErrInvalid
	switch {
	case err == nil:
	case errors.Is(err, store.ErrAppNameTaken):
		out.Available, out.Message = false, msgAppNameTaken
	case errors.As(err, &inv):
		out.Available, out.Message = false, inv.Msg
	default:
		return err
	}
	return respond(c, http.StatusOK, out)
}
