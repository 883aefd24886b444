package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// sectionTheme is the studio's Theme screen (issue 42 item 1): colours,
// background style, font and corners, with a preview of them. Saving
// refuses a colour that fails WCAG 2.2 AA contrast (store.CheckTheme) and
// suggests one that passes.
const sectionTheme = "theme"

// StudioTheme is the Theme screen and the JSON call's answer.
type StudioTheme struct {
	Theme store.ThemeSettings `json:"theme"`
	// Fonts are the bundled fonts to pick from.
	Fonts []store.ThemeFont `json:"fonts"`
	// Previewing: the screen shows a proposed theme that is not saved.
	Previewing bool `json:"previewing"`
	// IconURL is the app's icon at 192 px: its upload's, or its monogram.
	IconURL string `json:"iconUrl"`
	// IconUploaded: an icon was uploaded (a monogram stands in before).
	IconUploaded bool `json:"iconUploaded"`
}

func studioTheme(sc *Scope) *StudioTheme {
	icons := iconsOf(sc.App, "")
	return &StudioTheme{Theme: sc.App.Settings.Theme.Resolved(), Fonts: store.ThemeFonts, IconURL: icons.Icon192, IconUploaded: icons.Uploaded}
}

// themeForm reads the Theme form (primaryColor, accentColor, scheme, font,
// corners).
func themeForm(c echo.Context) store.ThemeSettings {
	return store.ThemeSettings{PrimaryColor: c.FormValue("primaryColor"), AccentColor: c.FormValue("accentColor"),
		Scheme: c.FormValue("scheme"), Font: c.FormValue("font"), Corners: c.FormValue("corners")}
}

// GET /apps/:app/studio/theme
func (s *Server) pageStudioTheme(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionTheme, Theme: studioTheme(sc)}, http.StatusOK)
}

// GET /apps/:app/studio/theme/preview?primaryColor=...: the Theme screen
// in the proposed theme, unsaved: the preview without JavaScript (the form's
// Preview button). A proposal that fails is shown with why, in the saved
// theme.
func (s *Server) pageStudioThemePreview(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	t := studioTheme(sc)
	proposed, err := store.CheckTheme(themeForm(c))
	t.Theme, t.Previewing = proposed.Resolved(), true
	if e := refusal(err, nil); e != nil {
		return s.renderStudio(c, sc, StudioData{Section: sectionTheme, Theme: t, Form: "theme", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	// The page itself wears the proposal: a copy of the shared app view.
	app := *sc.App
	app.Settings.Theme = proposed
	preview := *sc
	preview.App = &app
	return s.renderStudio(c, &preview, StudioData{Section: sectionTheme, Theme: t,
		Notice: "Preview: this page shows the theme as your app would. Save to use it."}, http.StatusOK)
}

// POST /apps/:app/studio/theme
func (s *Server) formStudioTheme(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	in := themeForm(c)
	_, err = s.store.SaveTheme(c.Request().Context(), sc.App.ID, sc.User.ID, in)
	if e := refusal(err, nil); e != nil {
		t := studioTheme(sc)
		t.Theme = in // the form comes back as it was sent
		return s.renderStudio(c, sc, StudioData{Section: sectionTheme, Theme: t, Form: "theme", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/theme", "saved")
}

// GET /api/studio/apps/:appId/theme
func (s *Server) apiStudioTheme(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, studioTheme(sc))
}

// PUT /api/studio/apps/:appId/theme {primaryColor, accentColor, scheme,
// font, corners}: empty fields are the defaults. A colour that fails
// contrast answers 400 with the ratio and a passing colour.
func (s *Server) apiStudioSetTheme(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var in store.ThemeSettings
	if err := c.Bind(&in); err != nil {
		return badRequest("Invalid request body")
	}
	saved, err := s.store.SaveTheme(c.Request().Context(), sc.App.ID, sc.User.ID, in)
	if err != nil {
		return err
	}
	t := studioTheme(sc)
	t.Theme = saved.Resolved()
	return respond(c, http.StatusOK, t)
}
