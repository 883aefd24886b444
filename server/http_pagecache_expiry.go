package server

import (
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// A cached page is kept until what it shows would read differently with
// the clock alone, not a fixed minute: the render notes when its relative
// times change ("5m ago" at the next minute, "3d ago" at the next day) and
// when the events it shows start or end (render.Result.ChangesAt), and the
// loaders note what they leave out from a time on (a story after its day).
// At a thousand apps whose posts are hours or days old, a fixed minute had
// every page read re-rendered every minute for nothing.
//
// Bounds: no sooner than PageTTL after the render (a page showing "just
// now" is renewed once a minute, as before), and no later than
// PageTTLMax, the bound of what neither writes nor notes announce (the
// landing data is remembered as long: store.LandingTTL).
const PageTTLMax = store.LandingTTL

const changesAtKey = "pagecache.changesAt"

// noteChangesAt notes that the page being rendered reads differently from t
// on; the earliest note counts.
func noteChangesAt(c echo.Context, t time.Time) {
	if t.IsZero() {
		return
	}
	if known, ok := c.Get(changesAtKey).(time.Time); ok && !t.Before(known) {
		return
	}
	c.Set(changesAtKey, t)
}

// pageExpiry is when a page rendered at rendered stops being current.
func pageExpiry(c echo.Context, rendered time.Time) time.Time {
	changes, _ := c.Get(changesAtKey).(time.Time)
	switch floor, ceiling := rendered.Add(PageTTL), rendered.Add(PageTTLMax); {
	case changes.IsZero() || changes.After(ceiling):
		return ceiling
	case changes.Before(floor):
		return floor
	default:
		return changes
	}
}
