package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// applyBan loads the viewer's ban or silence in the app (by account or by
// e-mail, so a new account does not escape it), takes away what it forbids,
// and refuses a write it stops with a clear 403 before any handler runs.
func (s *Server) applyBan(c echo.Context, sc *Scope) error {
	ban, err := s.store.BanOf(c.Request().Context(), sc.App.ID, sc.User.ID, sc.User.Email, time.Now())
	if err != nil {
		return err
	}
	if ban == nil {
		return nil
	}
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
		msg = "You are silenced in this app and cannot post, comment or react"
	}
	if b.EndsAt != nil {
		msg += " until " + b.EndsAt.UTC().Format("Jan 2, 2006 15:04 UTC")
	}
	if b.Reason != "" {
		msg += ". Reason: " + b.Reason
	}
	return msg
}
