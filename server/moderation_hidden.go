package server

import (
	"github.com/labstack/echo/v4"

	"marquee/server/access"
)

// sees reports whether the viewer may see content hidden for reason
// (store.Hidden*, "" when shown) written by authorID: everyone sees shown
// content; hidden content only its author (marked) and the app's
// moderators see.
func (sc *Scope) sees(hidden, authorID string) bool {
	return hidden == "" || (sc.User != nil && sc.User.ID == authorID) || access.SeesHidden(sc.Role)
}

// keepPrivate stops the page cache from keeping an answer that shows hidden
// content: its author's view of it must never reach anyone else of the role.
func keepPrivate(c echo.Context, hidden string) {
	if hidden != "" {
		c.Response().Header().Set("Cache-Control", "no-store")
	}
}
