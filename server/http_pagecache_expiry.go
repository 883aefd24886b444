package server

import (
	"time"

	"github.com/labstack/echo/v4"

	"marquee/render"
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
//
// When only relative times change, the page is renewed by rewriting them
// (http_pagecache_restamp.go) until the first other note or PageTTLMax.
const PageTTLMax = store.LandingTTL

const (
	changesAtKey      = "pagecache.changesAt"
	otherChangesAtKey = "pagecache.otherChangesAt"
	renderClockKey    = "pagecache.renderClock"
)

// noteChangesAt notes that the page being rendered reads differently from t
// on; the earliest note counts.
func noteChangesAt(c echo.Context, t time.Time) {
	noteEarliest(c, changesAtKey, t)
	noteEarliest(c, otherChangesAtKey, t)
}

func noteEarliest(c echo.Context, key string, t time.Time) {
	if t.IsZero() {
		return
	}
	if known, ok := c.Get(key).(time.Time); ok && !t.Before(known) {
		return
	}
	c.Set(key, t)
}

// renderClock is what a render says of its relative times: the props' now
// it showed them as of, and how many it showed.
type renderClock struct {
	now time.Time
	ago int
}

// noteRender notes what a page's render (at props' now) changes with the
// clock. A request that renders twice is not rewritten later.
func noteRender(c echo.Context, res render.Result, now time.Time) {
	if res.ChangesAt > 0 {
		noteEarliest(c, changesAtKey, time.UnixMilli(res.ChangesAt))
	}
	if res.OtherChangesAt > 0 {
		noteEarliest(c, otherChangesAtKey, time.UnixMilli(res.OtherChangesAt))
	}
	if _, twice := c.Get(renderClockKey).(renderClock); twice {
		c.Set(renderClockKey, renderClock{ago: -1})
		return
	}
	c.Set(renderClockKey, renderClock{now: now, ago: res.Ago})
}

// pageExpiry is when a page rendered at rendered stops being current.
func pageExpiry(c echo.Context, rendered time.Time) time.Time {
	changes, _ := c.Get(changesAtKey).(time.Time)
	return expiryWithin(changes, rendered, rendered.Add(PageTTLMax))
}

// expiryWithin is changes held between PageTTL after from and ceiling.
func expiryWithin(changes, from, ceiling time.Time) time.Time {
	floor := from.Add(PageTTL)
	if floor.After(ceiling) {
		floor = ceiling
	}
	switch {
	case changes.IsZero() || changes.After(ceiling):
		return ceiling
	case changes.Before(floor):
		return floor
	default:
		return changes
	}
}

// pageClockOf is how the page rendered at rendered may be renewed by
// rewriting its relative times, nil when it may not (not one render, or
// nothing but the data's age bound renews it).
func pageClockOf(c echo.Context, rendered time.Time) *pageClock {
	rc, ok := c.Get(renderClockKey).(renderClock)
	if !ok || rc.ago <= 0 {
		return nil
	}
	until := rendered.Add(PageTTLMax)
	if other, ok := c.Get(otherChangesAtKey).(time.Time); ok && other.Before(until) {
		until = other
	}
	return &pageClock{now: rc.now, ago: rc.ago, until: until}
}
