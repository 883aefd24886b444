package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

type webManifest struct {
	Name            string         `json:"name"`
	ShortName       string         `json:"short_name"`
	Description     string         `json:"description,omitempty"`
	StartURL        string         `json:"start_url"`
	Scope           string         `json:"scope"`
	Display         string         `json:"display"`
	BackgroundColor string         `json:"background_color"`
	ThemeColor      string         `json:"theme_color"`
	Icons           []manifestIcon `json:"icons"`
}

type manifestIcon struct {
	Src     string `json:"src"`
	Sizes   string `json:"sizes"`
	Type    string `json:"type"`
	Purpose string `json:"purpose,omitempty"`
}

var defaultIcons = []manifestIcon{{Src: "/static/icon.svg", Sizes: "any", Type: "image/svg+xml", Purpose: "any"}}

func writeManifest(c echo.Context, m webManifest) error {
	c.Response().Header().Set("Content-Type", "application/manifest+json")
	if c.Response().Header().Get("Cache-Control") == "" {
		c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	}
	return c.JSON(http.StatusOK, m)
}

// GET /manifest.webmanifest: the platform's own pages (/apps, sign-in).
func (s *Server) siteManifest(c echo.Context) error {
	return writeManifest(c, webManifest{Name: "Marquee", ShortName: "Marquee", StartURL: "/apps", Scope: "/",
		Display: "standalone", BackgroundColor: "#ffffff", ThemeColor: themeColor, Icons: defaultIcons})
}

// GET /apps/:app/manifest.webmanifest installs one creator's app to the home
// screen under its own name, opening at its landing page. Scope and start
// URL end in a slash: a scope of /apps/demo would also claim /apps/demo2
// and /apps/demos (scopes match by prefix).
func (s *Server) appManifest(c echo.Context) error {
	view, err := s.appAsset(c)
	if err != nil {
		return err
	}
	// On the app's own domain the app is the whole site: scope and start
	// URL are its root.
	base := appBasePath(c.Request(), view.Name)
	name := view.Settings.Basic.DisplayName
	if name == "" {
		name = strings.ToUpper(view.Name) // as the header shows it
	}
	theme := view.Settings.Theme
	short := name
	if r := []rune(short); len(r) > 12 {
		// Under the icon on a home screen: about 12 characters fit.
		short = strings.TrimSpace(string(r[:12]))
	}
	return writeManifest(c, webManifest{Name: name, ShortName: short, Description: view.Settings.Basic.MetaDescription,
		StartURL: base + "/", Scope: base + "/", Display: "standalone", BackgroundColor: theme.Background(), ThemeColor: themeColorOf(theme),
		Icons: manifestIcons(iconsOf(view, ""))})
}
