package server

import "marquee/render"

func renderDocument(res render.Result) render.DocumentData {
	return render.DocumentData{Lang: "en", Result: res, ThemeColor: "#111827"}
}
