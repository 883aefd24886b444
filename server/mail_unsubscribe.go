package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/mail"
	"marquee/store"
)

// Mailer is how this server's configuration sends mail (the send job uses
// it: SMTP_URL, or .eml files in MAIL_DIR), with links to this server's
// public addresses.
//
// Its links to an app's pages are on the app's verified domain, when it
// has one (appBaseByName).
func (s *Server) Mailer() *mail.Sender {
	m := s.cfg.Mailer()
	m.Sites.App = s.appBaseByName
	return m
}

// msgVerifyFirst is why an unverified member may not pay, post or donate.
const msgVerifyFirst = "Please confirm your email address first: open the link we sent you, or ask for a new one in your account settings."

// verifiedEmail guards paying, posting and donating: with
// REQUIRE_VERIFIED_EMAIL a member whose address is not confirmed is refused
// (403); browsing and following stay open.
func (s *Server) verifiedEmail(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if u := viewerOf(c).User; s.cfg.RequireVerifiedEmail && u != nil && !u.EmailVerified {
			return answer(store.ErrEmailNotVerified, nil)
		}
		return next(c)
	}
}

// UnsubscribeData is the Data of the Unsubscribe page.
type UnsubscribeData struct {
	Done    bool   `json:"done"`
	Kind    string `json:"kind"`
	AppName string `json:"appName"`
	Action  string `json:"action"`
}

// GET /mail/unsubscribe/:token: the page a mail's unsubscribe link opens,
// with one button (a GET changes nothing: link checkers open links).
func (s *Server) pageUnsubscribe(c echo.Context) error {
	t, err := s.store.UnsubscribeByToken(c.Request().Context(), c.Param("token"), false)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("This unsubscribe link is not valid")
	}
	if err != nil {
		return err
	}
	props := s.pageProps(c, nil)
	props.Data = UnsubscribeData{Done: c.QueryParam("done") == "1", Kind: t.Kind, AppName: t.AppName,
		Action: "/mail/unsubscribe/" + c.Param("token")}
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.renderPage(c, "Unsubscribe", props)
}

// POST /mail/unsubscribe/:token: RFC 8058 one-click unsubscribe (the mail
// client posts List-Unsubscribe=One-Click) and the page's button. The
// token in the path is the authority, so cross-site posts are allowed.
func (s *Server) postUnsubscribe(c echo.Context) error {
	_, err := s.store.UnsubscribeByToken(c.Request().Context(), c.Param("token"), true)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("This unsubscribe link is not valid")
	}
	if err != nil {
		return err
	}
	if c.FormValue("List-Unsubscribe") == "One-Click" {
		return c.String(http.StatusOK, "Unsubscribed")
	}
	return c.Redirect(http.StatusSeeOther, "/mail/unsubscribe/"+c.Param("token")+"?done=1")
}
