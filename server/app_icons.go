package server

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/color"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/media"
	"marquee/store"
)

// An app's icons (issue 42 item 2). The creator uploads one square icon in
// the studio (a plain multipart form); the server makes the favicon, the
// Apple touch icon, the manifest's 192, 512 and maskable icons, the mail
// header and the Open Graph fallback from it (media.IconSpecs), stored
// beside the upload. Until one is uploaded, a monogram in the app's colours
// stands in: the same PNGs drawn from the display name's first letter, and
// an SVG favicon.

// minIconSide is the smallest icon accepted: the manifest's 192 px icon.
const minIconSide = 192

// iconKey is where a derived icon of the uploaded icon mediaID is stored.
func iconKey(appID, mediaID, name string) string {
	return "apps/" + appID + "/icons/" + mediaID + "/" + name
}

// appIcons are the URLs of an app's icons, each with a version so a new
// icon or colour is fetched again.
type appIcons struct {
	Favicon, FaviconType, Apple, Icon192, Icon512, Maskable, Mail, OG string
	Uploaded                                                          bool
}

// iconVersion changes with the uploaded icon, or the monogram's colours and
// letter.
func iconVersion(view *store.AppView) string {
	if view.Logo != nil {
		return view.Logo.ID
	}
	t := view.Settings.Theme.Resolved()
	return strings.TrimPrefix(t.PrimaryColor, "#") + strings.TrimPrefix(t.Background(), "#") + url.QueryEscape(media.MonogramLetter(appDisplayName(view)))
}

func appDisplayName(view *store.AppView) string {
	if n := view.Settings.Basic.DisplayName; n != "" {
		return n
	}
	return strings.ToUpper(view.Name)
}

// iconsOf are the icon URLs of an app, under base (the main site's URL, or
// "" for its own pages).
func iconsOf(view *store.AppView, base string) appIcons {
	dir := base + "/apps/" + url.PathEscape(view.Name) + "/icons/"
	v := "?v=" + iconVersion(view)
	i := appIcons{Favicon: dir + "favicon.png" + v, FaviconType: "image/png", Apple: dir + "apple-touch-icon.png" + v,
		Icon192: dir + "icon-192.png" + v, Icon512: dir + "icon-512.png" + v, Maskable: dir + "maskable-512.png" + v,
		Mail: dir + "mail-header.png" + v, OG: dir + "og.png" + v, Uploaded: view.Logo != nil}
	if !i.Uploaded {
		i.Favicon, i.FaviconType = dir+"monogram.svg"+v, "image/svg+xml"
	}
	return i
}

// manifestIcons are the manifest's icons: PNG 192 and 512 and a maskable
// 512, and the monogram's SVG while there is no upload.
func manifestIcons(i appIcons) []manifestIcon {
	icons := []manifestIcon{
		{Src: i.Icon192, Sizes: "192x192", Type: "image/png", Purpose: "any"},
		{Src: i.Icon512, Sizes: "512x512", Type: "image/png", Purpose: "any"},
		{Src: i.Maskable, Sizes: "512x512", Type: "image/png", Purpose: "maskable"},
	}
	if !i.Uploaded {
		icons = append(icons, manifestIcon{Src: i.Favicon, Sizes: "any", Type: "image/svg+xml", Purpose: "any"})
	}
	return icons
}

func hexRGBA(hex string) color.RGBA {
	var r, g, b uint8
	fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b)
	return color.RGBA{r, g, b, 255}
}

// monogramSVG is the monogram favicon: the letter in the background
// colour on a rounded square of the primary.
func monogramSVG(view *store.AppView) string {
	t := view.Settings.Theme.Resolved()
	return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="` + t.PrimaryColor +
		`"/><text x="32" y="44" text-anchor="middle" font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" font-size="36" font-weight="700" fill="` +
		t.Background() + `">` + html.EscapeString(media.MonogramLetter(appDisplayName(view))) + `</text></svg>`
}

// GET /apps/:app/icons/:file (favicon.png, apple-touch-icon.png,
// icon-192.png, icon-512.png, maskable-512.png, mail-header.png, og.png,
// monogram.svg)
func (s *Server) appIcon(c echo.Context) error {
	view, err := s.appAsset(c)
	if err != nil {
		return err
	}
	file := c.Param("file")
	h := c.Response().Header()
	// The URLs carry a version (iconsOf): a day is safe, and a new icon
	// or colour has a new URL. An unpublished app's are its staff's.
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "public, max-age=86400")
	}
	if file == "monogram.svg" {
		return c.Blob(http.StatusOK, "image/svg+xml", []byte(monogramSVG(view)))
	}
	spec, ok := media.IconSpecByName(file)
	if !ok {
		return notFound("Icon not found")
	}
	b, err := s.iconBytes(c, view, spec)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "image/png", b)
}

// iconBytes is one derived icon: stored (made again when missing, as
// after an upload on S3 whose icons were not made yet), or the monogram.
func (s *Server) iconBytes(c echo.Context, view *store.AppView, spec media.IconSpec) ([]byte, error) {
	ctx := c.Request().Context()
	t := view.Settings.Theme.Resolved()
	bg := hexRGBA(t.Background())
	if view.Logo != nil {
		key := iconKey(view.ID, view.Logo.ID, spec.Name)
		if f, _, err := s.files.Open(ctx, key); err == nil {
			defer f.Close()
			return io.ReadAll(f)
		}
		if err := media.MakeIcons(ctx, s.files, view.Logo.Path, bg, func(name string) string { return iconKey(view.ID, view.Logo.ID, name) }); err != nil {
			s.logger.Warn("make icons", "app", view.Name, "err", err)
		} else if f, _, err := s.files.Open(ctx, key); err == nil {
			defer f.Close()
			return io.ReadAll(f)
		}
	}
	mono, err := media.Monogram(media.MonogramLetter(appDisplayName(view)), bg, hexRGBA(t.PrimaryColor))
	if err != nil {
		return nil, err
	}
	return media.RenderIcon(mono, spec, hexRGBA(t.PrimaryColor))
}

// checkIcon reads an uploaded icon's size: square, at least minIconSide.
func checkIcon(data []byte) error {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return fieldError("icon", "The icon must be a PNG, JPEG, GIF or WebP image")
	}
	if cfg.Width != cfg.Height {
		return fieldError("icon", fmt.Sprintf("The icon must be square: this one is %d × %d px", cfg.Width, cfg.Height))
	}
	if cfg.Width < minIconSide {
		return fieldError("icon", fmt.Sprintf("The icon must be at least %d × %d px: this one is %d × %d px", minIconSide, minIconSide, cfg.Width, cfg.Height))
	}
	return nil
}

// POST /apps/:app/studio/icon: the icon as a multipart file (field file),
// or remove=1 to go back to the monogram.
func (s *Server) formStudioIcon(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	mediaID := ""
	if c.FormValue("remove") == "" {
		fh, ferr := c.FormFile("file")
		if ferr != nil {
			err = fieldError("icon", "Choose a square image for the icon")
		} else if f, oerr := fh.Open(); oerr != nil {
			err = badRequest("The file could not be read")
		} else {
			data, _ := io.ReadAll(io.LimitReader(f, 10<<20))
			f.Close()
			err = checkIcon(data)
		}
		if err == nil {
			var m *store.Media
			if m, err = s.saveFormFile(c, "file", "icon", &sc.App.ID, sc.User.ID); err == nil && m != nil {
				mediaID = m.ID
				bg := hexRGBA(sc.App.Settings.Theme.Background())
				if merr := media.MakeIcons(ctx, s.files, m.Path, bg, func(name string) string { return iconKey(sc.App.ID, m.ID, name) }); merr != nil {
					// Made on first request instead (iconBytes).
					s.logger.Warn("make icons", "app", sc.App.Name, "err", merr)
				}
			}
		}
	}
	if err == nil {
		err = s.store.SetAppImage(ctx, sc.App.ID, sc.User.ID, "icon", mediaID)
	}
	if e := refusal(err, nil); e != nil {
		return s.renderStudio(c, sc, StudioData{Section: sectionTheme, Theme: studioTheme(sc), Form: "icon", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/theme", "saved")
}
