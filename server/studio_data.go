package server

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// sectionData is the studio's "Export & delete" screen (issue 43 item 3):
// the app's data as one archive mailed as a link, and the app's deletion
// (typing its name; refused while money is pending). The creator's alone.
const sectionData = "data"

const msgCreatorOnlyData = "Only the app's creator can export or delete the app"

// StudioAppData is the screen: recent exports, where their mail goes, and
// what keeps the app from being deleted now.
type StudioAppData struct {
	Exports []store.AppExport `json:"exports"`
	MailTo  string            `json:"mailTo"`
	// Pending says, in words, what money is on its way or owed; the app
	// cannot be deleted until it is empty.
	Pending []string `json:"pending"`
	// Confirm is the name typed in a refused deletion.
	Confirm string `json:"confirm"`
}

func creatorScope(c echo.Context) (*Scope, error) {
	sc, err := studioScope(c)
	if err != nil {
		return nil, err
	}
	if sc.Role != store.RoleCreator {
		return nil, forbidden(msgCreatorOnlyData)
	}
	return sc, nil
}

func (s *Server) studioAppData(c echo.Context, sc *Scope) (*StudioAppData, error) {
	ctx := c.Request().Context()
	d := &StudioAppData{MailTo: sc.User.Email}
	var err error
	if d.Exports, err = s.store.AppExports(ctx, sc.App.ID, 5); err != nil {
		return nil, err
	}
	if d.Pending, err = s.store.MoneyPending(ctx, sc.App.ID); err != nil {
		return nil, err
	}
	if d.Pending == nil {
		d.Pending = []string{}
	}
	return d, nil
}

// GET /apps/:app/studio/data
func (s *Server) pageStudioData(c echo.Context) error {
	sc, err := creatorScope(c)
	if err != nil {
		return err
	}
	d, err := s.studioAppData(c, sc)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionData, AppData: d}, http.StatusOK)
}

// POST /apps/:app/studio/data/export: a job builds the archive and mails
// the creator its link.
func (s *Server) formStudioExport(c echo.Context) error {
	sc, err := creatorScope(c)
	if err != nil {
		return err
	}
	if _, err := s.store.RequestAppExport(c.Request().Context(), sc.App.ID, sc.User.ID); err != nil {
		return err
	}
	return studioBack(c, sc, "/data", "export-requested")
}

// GET /apps/:app/studio/data/export?token=: the archive, for the creator
// who asked for it, signed in, within 3 days.
func (s *Server) downloadAppExport(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return c.Redirect(http.StatusFound, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
	}
	if sc.Role != store.RoleCreator {
		return forbidden(msgCreatorOnlyData)
	}
	e, err := s.store.AppExportByToken(c.Request().Context(), sc.App.ID, sc.User.ID, c.QueryParam("token"))
	if errors.Is(err, store.ErrNotFound) {
		return notFound("This export link has expired or is not yours: ask for a new export in the studio")
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `attachment; filename="`+sc.App.Name+`-export-`+e.CreatedAt.Format("2006-01-02")+`.zip"`)
	return c.Blob(http.StatusOK, "application/zip", e.Content)
}

// POST /apps/:app/studio/data/delete (confirm: the app's name): the app
// and everything in it go; its files are removed by durable jobs. Refused
// while money is pending, with what.
func (s *Server) formStudioDeleteApp(c echo.Context) error {
	sc, err := creatorScope(c)
	if err != nil {
		return err
	}
	typed := c.FormValue("confirm")
	_, err = s.store.DeleteAppAsCreator(c.Request().Context(), sc.App.ID, typed)
	var pending *store.ErrMoneyPending
	switch {
	case err == nil:
		return c.Redirect(http.StatusSeeOther, "/apps?deleted="+url.QueryEscape(sc.App.Name))
	case errors.Is(err, store.ErrNameMismatch):
		return s.refuseDelete(c, sc, typed, fieldError("confirm", "Type "+sc.App.Name+" exactly to confirm"))
	case errors.As(err, &pending):
		return s.refuseDelete(c, sc, typed, &Error{Status: http.StatusConflict, Message: pending.Error()})
	}
	return err
}

func (s *Server) refuseDelete(c echo.Context, sc *Scope, typed string, e *Error) error {
	d, err := s.studioAppData(c, sc)
	if err != nil {
		return err
	}
	d.Confirm = typed
	return s.renderStudio(c, sc, StudioData{Section: sectionData, AppData: d, Form: "delete", Error: e.Message, Fields: e.Fields}, e.Status)
}
