package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// GET /authenticate/welcome: where the sign-up form goes. It says that the
// confirmation mail was sent, to which address and where to look for it,
// with the way on to the app and a button that sends the link again.
func (s *Server) pageSignUpWelcome(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	u := viewerOf(c).User
	if u == nil {
		return c.Redirect(http.StatusSeeOther, authAction("signin", app))
	}
	// The account as it is now, not as the session lookup remembered it: a
	// link confirmed a moment ago shows at once.
	if u, err = s.store.UserByID(c.Request().Context(), u.ID); err != nil {
		return err
	}
	next := AuthLink{Label: "Continue", Href: s.afterAuthURL(app)}
	if app != nil {
		next.Label = "Continue to " + app.Settings.Basic.Title(app.Name)
	}
	if u.EmailVerified {
		return s.renderAuthMessage(c, http.StatusOK, app, "Welcome, @"+u.Username, u.Email+" is confirmed.", []AuthLink{next})
	}
	return s.renderAuthMessage(c, http.StatusOK, app, "Check your inbox", signUpMailWords(u, s.cfg.RequireVerifiedEmail),
		[]AuthLink{next, {Label: "Send the link again", Href: "/authenticate/verify/resend" + appQuery(app), Post: true}})
}

// signUpMailWords tells a new member where the confirmation mail went.
func signUpMailWords(u *store.User, required bool) string {
	until := ""
	if required {
		until = "; until then you can look around and follow, but not pay, post or donate"
	}
	return "Welcome, @" + u.Username + "! We sent a mail titled \u201cConfirm your e-mail address\u201d to " + u.Email +
		". Open its link to confirm the address (it works for 48 hours)" + until + "." +
		" Not in your inbox in a few minutes? Look in the spam, junk or promotions folder."
}
