package server

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"time"

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

// A sign-in starts on the domain (its pages link /authenticate/signin
// there), which keeps a random state in a cookie of its own and sends the
// browser to the auth host with it; the auth host keeps it in a cookie of
// its own across its forms and sends it back with the code; the callback
// spends the code only when the state it brings is the domain's cookie.
// So nobody can sign a browser in to their own account on the domain by
// sending it a code they made (login CSRF).
const (
	stateCookie   = "marquee_state"   // the domain's
	handoffCookie = "marquee_handoff" // the auth host's
	stateTTL      = 15 * time.Minute
)

// GET /authenticate/{signin,signup,...} on a custom domain (routed as
// /apps/:app/authenticate/:page): a sign-in or sign-up starts here, with
// its state; any other auth page is the auth host's.
func (s *Server) domainAuthStart(c echo.Context) error {
	d := customHost(c.Request())
	if d == nil || d.AppName != c.Param("app") {
		return notFound("Not found")
	}
	page := c.Param("page")
	if page != "signin" && page != "signup" {
		// The auth host's page, with what the link carried (a reset
		// link's token).
		q := c.Request().URL.Query()
		q.Set("app", d.AppName)
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/"+url.PathEscape(page)+"?"+q.Encode())
	}
	state := store.NewSessionToken()
	c.SetCookie(&http.Cookie{Name: stateCookie, Value: state, Path: "/", HttpOnly: true, Secure: s.cfg.SecureCookies(),
		SameSite: http.SameSiteLaxMode, MaxAge: int(stateTTL / time.Second)})
	q := url.Values{"app": {d.AppName}, "state": {state}, "page": {page}}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/continue?"+q.Encode())
}

// GET /authenticate/continue?app=NAME[&state=S&page=signin|signup] on the
// auth host: the signed-in browser is sent to the app's domain with a
// fresh code and its state; a visitor is sent to the sign-in (or sign-up)
// form, the state kept in the auth host's cookie until they are signed in;
// an app without a verified domain is opened on the main site.
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
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	state := c.QueryParam("state")
	if state == "" {
		if ck, err := c.Cookie(handoffCookie); err == nil {
			state = ck.Value
		}
	}
	ck, err := c.Cookie(sessionCookie)
	if err != nil || ck.Value == "" || viewerOf(c).User == nil {
		if state != "" {
			c.SetCookie(&http.Cookie{Name: handoffCookie, Value: state, Path: "/authenticate", HttpOnly: true,
				Secure: s.cfg.SecureCookies(), SameSite: http.SameSiteLaxMode, MaxAge: int(stateTTL / time.Second)})
		}
		page := "signin"
		if c.QueryParam("page") == "signup" {
			page = "signup"
		}
		return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/"+page+"?app="+url.QueryEscape(app.Name))
	}
	if state == "" {
		// Not started on the domain (a link from a mail, the account
		// page): the domain starts it, with its state.
		return c.Redirect(http.StatusSeeOther, s.domainOrigin(domain)+"/authenticate/signin")
	}
	code, err := s.store.CreateDomainSignIn(c.Request().Context(), ck.Value, domain)
	if err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{Name: handoffCookie, Path: "/authenticate", MaxAge: -1, Expires: time.Unix(0, 0)})
	q := url.Values{"code": {code}, "state": {state}}
	return c.Redirect(http.StatusSeeOther, s.domainOrigin(domain)+"/auth/callback?"+q.Encode())
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
	state, err := c.Cookie(stateCookie)
	got := c.QueryParam("state")
	if err != nil || state.Value == "" || subtle.ConstantTimeCompare([]byte(state.Value), []byte(got)) != 1 {
		return &Error{Status: http.StatusBadRequest, Message: "This sign-in did not start on this site. Please sign in again."}
	}
	c.SetCookie(&http.Cookie{Name: stateCookie, Path: "/", MaxAge: -1, Expires: time.Unix(0, 0)})
	token, err := s.store.ExchangeDomainSignIn(c.Request().Context(), c.QueryParam("code"), d.Domain, c.Request().UserAgent())
	if err != nil {
		if err == store.ErrTokenInvalid {
			return &Error{Status: http.StatusBadRequest, Message: "This sign-in link is invalid or has expired. Please sign in again."}
		}
		return err
	}
	s.setSessionCookie(c, token)
	return c.Redirect(http.StatusSeeOther, "/")
}
