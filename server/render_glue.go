package server

import (
	"net/url"

	"marquee/render"
	"marquee/store"
)

const themeColor = "#111827"

// documentData is the HTML shell of a page; app pages link their app's manifest.
func documentData(res render.Result, app *store.AppView) render.DocumentData {
	d := render.DocumentData{Lang: "en", Result: res, ThemeColor: themeColor}
	if app != nil {
		d.ManifestURL = "/apps/" + url.PathEscape(app.Name) + "/manifest.webmanifest"
		// The app's language, as its creator set it in the studio.
		if l := app.Settings.Basic.Lang; l != "" {
			d.Lang = l
		}
	}
	return d
}
