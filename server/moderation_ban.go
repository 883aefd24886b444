package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// applyBan applies the viewer's ban or silence in the app (StandingOf
// finds it by account or by e-mail, so a new account does not escape it):
// it takes away what the ban forbids and refuses a write it stops with a
// clear 403 before any handler runs.
func applyBan(c echo.Context, sc *Scope, ban *store.Ban) error {
	sc.Ban = ban
	sc.Can = access.Restrict(sc.Can, ban.Kind)
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead:
		return nil
	}
	if access.Restricted(ban.Kind, c.Request().Method+" "+c.Path()) {
		return forbidden(banMessage(ban))
	}
	return nil
}

// banMessage says what holds the viewer back, until when and why.
func banMessage(b *store.Ban) string {
	msg := "You are banned from this app"
	if b.Kind == store.BanKindSilence {
		msg = "You are silenced in this app and cannot post, comment, react, moderate or change the app's profile or members' roles"
	}
	if b.EndsAt != nil {
		msg += " until " + b.EndsAt.UTC().Format("Jan 2, 2006 15:04 UTC")
	}
	if b.Reason != "" {
		msg += ". Reason: " + b.Reason
	}
	return msg
}
