package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// Signing in on a custom domain (issue 42 item 3). The domain's pages send
// the browser to the auth host as every app does; once signed in there,
// the auth host hands the sign-in over with a one-time code in a redirect
// to the domain's /auth/callback, which spends it server-side for a
// session cookie of the domain's own. No cookie crosses sites; the code
// works once, for that domain, for a minute (store.ExchangeDomainSignIn);
// the two sessions are linked, so signing out of either ends both.

// GET /authenticate/continue?app=NAME[&next=/path] on the auth host: the
// signed-in browser is sent to the app's domain with a fresh code; a
// visitor is sent to the sign-in form; an app without a verified domain
// is opened on the main site.
func (s *Server) authContinue(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	if app == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.PublicURL+"/")
	}
	domain := s.domains.get(c.Request().Context()).byApp[app.ID]
	if domain == "" {
		return c.Redirect(http.StatusSeeOther, s.cfg.PublicURL+"/apps/"+url.PathEscape(app.Name))
	}
	ck, err := c.Cookie(sessionCookie)
	if err != nil || ck.Value == "" || viewerOf(c).User == nil {
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(app.Name))
	}
	code, err := s.store.CreateDomainSignIn(c.Request().Context(), ck.Value, domain)
	if err != nil {
		return err
	}
	target := s.domainOrigin(domain) + "/auth/callback?code=" + url.QueryEscape(code)
	if next := c.QueryParam("next"); localPath(next) {
		target += "&next=" + url.QueryEscape(next)
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	return c.Redirect(http.StatusSeeOther, target)
}

// localPath: a path on the same host ("/x", never "//host" or "/\host").
func localPath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "/\\") && !strings.ContainsAny(p, "\r\n")
}

// GET /auth/callback?code= on a custom domain (routed as
// /apps/:app/auth/callback): the code becomes the domain's own session.
// The main site has no such page.
func (s *Server) domainCallback(c echo.Context) error {
	d := customHost(c.Request())
	if d == nil || d.AppName != c.Param("app") {
		return notFound("Not found")
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	token, err := s.store.ExchangeDomainSignIn(c.Request().Context(), c.QueryParam("code"), d.Domain, c.Request().UserAgent())
	if err != nil {
		if err == store.ErrTokenInvalid {
			return &Error{Status: http.StatusBadRequest, Message: "This sign-in link is invalid or has expired. Please sign in again."}
		}
		return err
	}
	s.setSessionCookie(c, token)
	next := c.QueryParam("next")
	if !localPath(next) {
		next = "/"
	}
	return c.Redirect(http.StatusSeeOther, next)
}
