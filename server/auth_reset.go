package server

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/auth"
	"marquee/store"
)

// resetForm is what the forgot-password and reset forms post.
type resetForm struct {
	Email    string `json:"email" form:"email"`
	Token    string `json:"token" form:"token"`
	Password string `json:"password" form:"password"`
}

const msgResetSent = "If an account uses that address, we sent it a link to choose a new password. The link works once, for one hour."

// accountMailContext names the app an account mail comes from.
func accountMailContext(app *store.AppView) store.AccountMailContext {
	if app == nil {
		return store.AccountMailContext{}
	}
	return store.AccountMailContext{AppID: app.ID, AppName: app.Name}
}

// GET /authenticate/forgot: the e-mail form of "Forgot password?".
func (s *Server) pageForgotPassword(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	return s.renderAuthForm(c, http.StatusOK, "forgot", app, authForm{}, nil)
}

// POST /authenticate/forgot: mails a reset link when the address is an
// account's, and answers the same either way. Limited per client address
// and per e-mail, so nobody floods an inbox.
func (s *Server) postForgotPassword(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	var f resetForm
	if err := c.Bind(&f); err != nil {
		return s.refuseAuthForm(c, "forgot", app, authForm{}, badRequest("Could not read the form"))
	}
	email := store.NormalizeEmail(f.Email)
	if !strings.Contains(email, "@") || len(email) > 254 {
		return s.refuseAuthForm(c, "forgot", app, authForm{Email: f.Email},
			fieldsError("Enter a valid email address", map[string]string{"email": "Enter a valid email address"}))
	}
	ctx := c.Request().Context()
	if ok, wait := s.limiter.count(ctx, "reset:addr:"+c.RealIP(), s.limits.ResetAddress); !ok {
		return s.refuseAuthForm(c, "forgot", app, authForm{Email: f.Email}, tooManyAttempts(c, wait))
	}
	if ok, wait := s.limiter.count(ctx, "reset:acct:"+email, s.limits.ResetAccount); !ok {
		return s.refuseAuthForm(c, "forgot", app, authForm{Email: f.Email}, tooManyAttempts(c, wait))
	}
	if err := s.store.QueuePasswordReset(ctx, email, accountMailContext(app)); err != nil {
		return err
	}
	if wantsJSON(c) {
		return respondDone(c, msgResetSent)
	}
	return s.renderAuthMessage(c, http.StatusOK, app, "Check your inbox", msgResetSent, nil)
}

// GET /authenticate/reset?token=: the new-password form, for a live link.
func (s *Server) pageResetPassword(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	token := c.QueryParam("token")
	if err := s.store.CheckToken(c.Request().Context(), token, store.TokenPasswordReset); err != nil {
		if errors.Is(err, store.ErrTokenInvalid) {
			return s.renderInvalidLink(c, app)
		}
		return err
	}
	return s.renderAuthForm(c, http.StatusOK, "reset", app, authForm{}, nil, func(d *AuthFormData) { d.Token = token })
}

func (s *Server) renderInvalidLink(c echo.Context, app *store.AppView) error {
	return s.renderAuthMessage(c, http.StatusBadRequest, app, "This link has expired",
		"This link is invalid, was already used or has expired. Ask for a new one.",
		[]AuthLink{{Label: "Forgot password?", Href: authAction("forgot", app)}})
}

// POST /authenticate/reset: sets the new password, signs the account out
// everywhere and signs this browser in with a fresh session.
func (s *Server) postResetPassword(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	var f resetForm
	if err := c.Bind(&f); err != nil {
		return s.refuseAuthForm(c, "reset", app, authForm{}, badRequest("Could not read the form"))
	}
	withToken := func(d *AuthFormData) { d.Token = f.Token }
	if err := auth.ValidatePassword(f.Password); err != nil {
		e := fieldsError(err.Error(), map[string]string{"password": err.Error()})
		if wantsJSON(c) {
			return s.refuseAuthForm(c, "reset", app, authForm{}, e)
		}
		return s.renderAuthForm(c, e.Status, "reset", app, authForm{}, e.Fields, withToken)
	}
	hash, err := s.cfg.PasswordCost.Hash(f.Password)
	if err != nil {
		return &Error{Status: http.StatusInternalServerError, Message: "Something went wrong", Err: err}
	}
	user, err := s.store.ResetPassword(c.Request().Context(), f.Token, hash)
	if errors.Is(err, store.ErrTokenInvalid) {
		if wantsJSON(c) {
			return answer(err, nil)
		}
		return s.renderInvalidLink(c, app)
	}
	if err != nil {
		return err
	}
	return s.startSession(c, user, app)
}

// GET /authenticate/verify?token=: confirms the address the link was sent
// to (sign-up, or a new address from the account settings).
func (s *Server) verifyEmail(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	token := c.QueryParam("token")
	user, err := s.store.VerifyEmail(ctx, token)
	if errors.Is(err, store.ErrTokenInvalid) {
		// Maybe it confirms a new address instead.
		user, err = s.store.ConfirmEmailChange(ctx, token)
	}
	if errors.Is(err, store.ErrTokenInvalid) || errors.Is(err, store.ErrEmailTaken) {
		msg := "This link is invalid, was already used or has expired."
		if errors.Is(err, store.ErrEmailTaken) {
			msg = "Another account uses this address now."
		}
		return s.renderAuthMessage(c, http.StatusBadRequest, app, "This link has expired", msg,
			[]AuthLink{{Label: "Account settings", Href: authAction("account", app)}})
	}
	if err != nil {
		return err
	}
	return s.renderAuthMessage(c, http.StatusOK, app, "Address confirmed",
		user.Email+" is confirmed. Thank you!", []AuthLink{{Label: "Continue", Href: s.afterAuthURL(app)}})
}

// GET /authenticate/email/undo?token=: the old address's link after an
// e-mail change (store.ConfirmEmailChange) asks to confirm with a button,
// so a mail scanner that follows links undoes nothing.
func (s *Server) pageUndoEmailChange(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	token := c.QueryParam("token")
	if err := s.store.CheckToken(c.Request().Context(), token, store.TokenEmailUndo); err != nil {
		return s.undoRefused(c, app, err)
	}
	return s.renderAuthMessage(c, http.StatusOK, app, "Undo the e-mail change",
		"Your account takes this address back, every session is signed out, and you choose a new password.",
		[]AuthLink{{Label: "Undo the change", Href: "/authenticate/email/undo?token=" + url.QueryEscape(token), Post: true}})
}

// POST /authenticate/email/undo?token=: takes the address back and sends
// the owner on to choose a new password.
func (s *Server) postUndoEmailChange(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	_, reset, err := s.store.UndoEmailChange(c.Request().Context(), c.FormValue("token"))
	if err != nil {
		return s.undoRefused(c, app, err)
	}
	s.clearSessionCookie(c)
	return c.Redirect(http.StatusSeeOther, "/authenticate/reset?token="+url.QueryEscape(reset))
}

func (s *Server) undoRefused(c echo.Context, app *store.AppView, err error) error {
	msg := "This link is invalid, was already used or has expired."
	switch {
	case errors.Is(err, store.ErrEmailTaken):
		msg = "Another account uses this address now. Contact the operator of this site."
	case !errors.Is(err, store.ErrTokenInvalid):
		return err
	}
	return s.renderAuthMessage(c, http.StatusBadRequest, app, "This link has expired", msg, nil)
}

// POST /authenticate/verify/resend: a new verification link for the
// signed-in member, a few times an hour.
func (s *Server) resendVerification(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	u := viewerOf(c).User
	if u == nil {
		return c.Redirect(http.StatusSeeOther, authAction("signin", app))
	}
	ctx := c.Request().Context()
	if ok, wait := s.limiter.count(ctx, "verify:resend:"+u.ID, s.limits.VerifyResend); !ok {
		e := tooManyAttempts(c, wait)
		if wantsJSON(c) {
			return e
		}
		return s.renderAuthMessage(c, e.Status, app, "Please wait", e.Message, nil)
	}
	if err := s.store.ResendVerification(ctx, u, accountMailContext(app)); err != nil {
		return err
	}
	msg := "We sent a new confirmation link to " + u.Email + "."
	if u.EmailVerified {
		msg = "Your address is already confirmed."
	}
	if wantsJSON(c) {
		return respondDone(c, msg)
	}
	return s.renderAuthMessage(c, http.StatusOK, app, "Check your inbox", msg,
		[]AuthLink{{Label: "Back", Href: s.afterAuthURL(app)}})
}

// AuthLink is a link under an auth-site message.
type AuthLink struct {
	Label string `json:"label"`
	Href  string `json:"href"`
	// Post makes the link a button of a form posting to Href (an action a
	// mail scanner following links must not take).
	Post bool `json:"post,omitempty"`
}

func (s *Server) renderAuthMessage(c echo.Context, status int, app *store.AppView, title, message string, links []AuthLink) error {
	return s.renderAuthForm(c, status, "message", app, authForm{}, nil, func(d *AuthFormData) {
		d.Title, d.Message, d.Links = title, message, links
	})
}

func appQuery(app *store.AppView) string {
	if app == nil {
		return ""
	}
	return "?app=" + url.QueryEscape(app.Name)
}
