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

// AccountData is the Data of the Account page (auth site): who is signed
// in, where, and what the last form did.
type AccountData struct {
	AppName       string              `json:"appName"`
	Query         string              `json:"query"`
	Email         string              `json:"email"`
	EmailVerified bool                `json:"emailVerified"`
	Username      string              `json:"username"`
	Sessions      []store.SessionView `json:"sessions"`
	Notice        string              `json:"notice"`
	Errors        map[string]string   `json:"errors"`
	// BackURL is the app (or the site) the member came from.
	BackURL string `json:"backUrl"`
}

// accountForm is what the account settings forms post.
type accountForm struct {
	Email           string `form:"email" json:"email"`
	Username        string `form:"username" json:"username"`
	CurrentPassword string `form:"currentPassword" json:"currentPassword"`
	// EmailPassword is the e-mail form's own password field (so its error
	// shows there); a JSON client may send currentPassword instead.
	EmailPassword string `form:"emailPassword" json:"emailPassword"`
	NewPassword   string `form:"newPassword" json:"newPassword"`
}

// GET /authenticate/account: e-mail, username, password and sessions.
func (s *Server) pageAccount(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	u := viewerOf(c).User
	if u == nil {
		return c.Redirect(http.StatusFound, authAction("signin", app))
	}
	return s.renderAccount(c, http.StatusOK, app, u, c.QueryParam("notice"), nil)
}

func (s *Server) renderAccount(c echo.Context, status int, app *store.AppView, u *store.User, notice string, errs map[string]string) error {
	sessions, err := s.store.SessionsOf(c.Request().Context(), u.ID, viewerOf(c).Token)
	if err != nil {
		return err
	}
	var sc *Scope
	if app != nil {
		sc = &Scope{App: app, Role: store.RolePublic}
	}
	if errs == nil {
		errs = map[string]string{}
	}
	props := s.pageProps(c, sc)
	props.Data = AccountData{AppName: appName(app), Query: appQuery(app), Email: u.Email, EmailVerified: u.EmailVerified,
		Username: u.Username, Sessions: sessions, Notice: notices[notice], Errors: errs, BackURL: s.afterAuthURL(app)}
	props.Status = status
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.renderPage(c, "Account", props)
}

func appName(app *store.AppView) string {
	if app == nil {
		return ""
	}
	return app.Name
}

// notices are the lines a settings form comes back with (a key in the
// redirect, so no text from the query is ever shown).
var notices = map[string]string{
	"email":    "We sent a confirmation link to your new address. Your address changes once you open it.",
	"username": "Your username was changed.",
	"password": "Your password was changed. Every other session was signed out.",
	"signout":  "Every other session was signed out.",
	"verify":   "We sent you a new confirmation link.",
	"export":   "We are preparing your data. We will e-mail you a link when it is ready.",
}

// accountAction runs one settings form for the signed-in member: done
// answers the notice key, or a refusal with the fields at fault.
func (s *Server) accountAction(do func(c echo.Context, u *store.User, f accountForm) (string, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		app, err := s.authApp(c)
		if err != nil {
			return err
		}
		u := viewerOf(c).User
		if u == nil {
			return c.Redirect(http.StatusSeeOther, authAction("signin", app))
		}
		var f accountForm
		if err := c.Bind(&f); err != nil {
			return badRequest("Could not read the form")
		}
		notice, err := do(c, u, f)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			e = refusal(err, nil)
		}
		if e != nil {
			if wantsJSON(c) {
				return e
			}
			errs := e.Fields
			if len(errs) == 0 {
				errs = map[string]string{"form": e.Message}
			}
			return s.renderAccount(c, e.Status, app, u, "", errs)
		}
		if err != nil {
			return err
		}
		if wantsJSON(c) {
			return respondDone(c, notices[notice])
		}
		q := url.Values{"notice": {notice}}
		if app != nil {
			q.Set("app", app.Name)
		}
		return c.Redirect(http.StatusSeeOther, "/authenticate/account?"+q.Encode())
	}
}

func fieldRefusal(field, msg string) *Error {
	return fieldsError(msg, map[string]string{field: msg})
}

// POST /authenticate/account/email: with the current password, the new
// address gets a confirmation link; the account keeps the old one until it
// is opened, and the old one can undo the change for a week.
func (s *Server) postAccountEmail(c echo.Context, u *store.User, f accountForm) (string, error) {
	// A session alone must not be enough to take the account: the new
	// address could reset the password.
	pw := f.EmailPassword
	if pw == "" {
		pw = f.CurrentPassword
	}
	if !passwordMatches(u, pw) {
		return "", fieldRefusal("emailPassword", "Enter your current password to change your e-mail address")
	}
	if errs := validateSignUp(authForm{Email: f.Email, Username: "placeholder", Password: "placeholder-password"}); errs["email"] != "" {
		return "", fieldRefusal("email", errs["email"])
	}
	app, _ := s.authApp(c)
	if err := s.store.RequestEmailChange(c.Request().Context(), u, f.Email, accountMailContext(app)); err != nil {
		return "", err
	}
	return "email", nil
}

// POST /authenticate/account/username.
func (s *Server) postAccountUsername(c echo.Context, u *store.User, f accountForm) (string, error) {
	if !usernamePattern.MatchString(strings.TrimSpace(f.Username)) {
		return "", fieldRefusal("username", "Use 3 to 30 letters, digits or underscores")
	}
	if err := s.store.ChangeUsername(c.Request().Context(), u.ID, f.Username); err != nil {
		return "", err
	}
	return "username", nil
}

// POST /authenticate/account/password: the current password is required;
// every other session ends.
func (s *Server) postAccountPassword(c echo.Context, u *store.User, f accountForm) (string, error) {
	ok, err := auth.VerifyPassword(u.PasswordHash, f.CurrentPassword)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fieldRefusal("currentPassword", "Your current password is not right")
	}
	if err := auth.ValidatePassword(f.NewPassword); err != nil {
		return "", fieldRefusal("newPassword", err.Error())
	}
	hash, err := s.cfg.PasswordCost.Hash(f.NewPassword)
	if err != nil {
		return "", err
	}
	if err := s.store.ChangePassword(c.Request().Context(), u.ID, hash, viewerOf(c).Token); err != nil {
		return "", err
	}
	return "password", nil
}

// POST /authenticate/account/signout-others: sign out everywhere else.
func (s *Server) postSignOutOthers(c echo.Context, u *store.User, _ accountForm) (string, error) {
	if _, err := s.store.EndOtherSessions(c.Request().Context(), u.ID, viewerOf(c).Token); err != nil {
		return "", err
	}
	return "signout", nil
}

// POST /authenticate/account/export: a job prepares the archive and mails
// its link.
func (s *Server) postAccountExport(c echo.Context, u *store.User, _ accountForm) (string, error) {
	app, _ := s.authApp(c)
	if err := s.store.RequestExport(c.Request().Context(), u.ID, accountMailContext(app)); err != nil {
		return "", err
	}
	return "export", nil
}

// GET /authenticate/account/export?token=: the archive, for the member
// whose link it is, while signed in.
func (s *Server) downloadExport(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	u := viewerOf(c).User
	if u == nil {
		return c.Redirect(http.StatusFound, authAction("signin", app))
	}
	e, err := s.store.ExportByToken(c.Request().Context(), u.ID, c.QueryParam("token"))
	if errors.Is(err, store.ErrNotFound) {
		return s.renderAuthMessage(c, http.StatusNotFound, app, "This link has expired",
			"This download is not yours, or it has expired. Ask for a new one in your account settings.",
			[]AuthLink{{Label: "Account settings", Href: authAction("account", app)}})
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `attachment; filename="my-data-`+e.CreatedAt.Format("2006-01-02")+`.json"`)
	return c.Blob(http.StatusOK, "application/json; charset=utf-8", []byte(*e.Content))
}

// POST /authenticate/account/delete: with the password, the account's
// personal data goes and every session ends; orders stay, anonymised.
func (s *Server) postAccountDelete(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	u := viewerOf(c).User
	if u == nil {
		return c.Redirect(http.StatusSeeOther, authAction("signin", app))
	}
	var f accountForm
	if err := c.Bind(&f); err != nil {
		return badRequest("Could not read the form")
	}
	refuse := func(e *Error) error {
		if wantsJSON(c) {
			return e
		}
		errs := e.Fields
		if len(errs) == 0 {
			errs = map[string]string{"delete": e.Message}
		}
		return s.renderAccount(c, e.Status, app, u, "", errs)
	}
	ok, err := auth.VerifyPassword(u.PasswordHash, f.CurrentPassword)
	if err != nil {
		return err
	}
	if !ok {
		return refuse(fieldRefusal("deletePassword", "Your password is not right"))
	}
	if err := s.store.DeleteAccount(c.Request().Context(), u.ID); err != nil {
		if e := refusal(err, nil); e != nil {
			e.Fields = map[string]string{"delete": e.Message}
			return refuse(e)
		}
		return err
	}
	s.clearSessionCookie(c)
	if wantsJSON(c) {
		return respondDone(c, "Your account was deleted")
	}
	return s.renderAuthMessage(c, http.StatusOK, app, "Your account was deleted",
		"Your profile, posts, comments and memberships are gone and you are signed out everywhere. Orders and payments stay in the creators' books without your name.",
		[]AuthLink{{Label: "Back", Href: s.afterAuthURL(app)}})
}
