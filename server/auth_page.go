package server

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/auth"
	"marquee/store"
)

// authForm is what the sign-in and sign-up forms post, form-encoded or JSON.
// Sign-in reads Email as "email or username".
type authForm struct {
	Email    string `json:"email" form:"email"`
	Username string `json:"username" form:"username"`
	Password string `json:"password" form:"password"`
}

// AuthFormData is the Data of the AuthForm page: the typed values (never the
// password) and field errors keyed by field name, "form" for the whole form.
type AuthFormData struct {
	Mode     string            `json:"mode" tstype:"'signin' | 'signup' | 'forgot' | 'reset' | 'message'"`
	AppName  string            `json:"appName"`
	Action   string            `json:"action"`
	Values   map[string]string `json:"values"`
	Errors   map[string]string `json:"errors"`
	SignedIn string            `json:"signedIn,omitempty"`
	// Token is the reset form's link token; Title, Message and Links are
	// what a "message" page says (a mail sent, a link used).
	Token   string     `json:"token,omitempty"`
	Title   string     `json:"title,omitempty"`
	Message string     `json:"message,omitempty"`
	Links   []AuthLink `json:"links,omitempty"`
}

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9_]{3,30}$`)

// authApp resolves ?app= to an existing app, or nil. Only a real app name is
// ever put into a redirect, so ?app= cannot make us an open redirect.
func (s *Server) authApp(c echo.Context) (*store.AppView, error) {
	name := c.QueryParam("app")
	if name == "" {
		return nil, nil
	}
	view, err := s.store.Landing(c.Request().Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if view.Unpublished {
		// Not published yet (issue 43 item 1): its sign-in wears its brand
		// for its staff only; anyone else gets the site's own.
		if u := viewerOf(c).User; u == nil || !s.seesUnpublished(c, view.ID, u.ID) {
			return nil, nil
		}
	}
	return view, nil
}

// afterAuthURL is where a successful sign-in or sign-up goes: the app on the
// main site, or the site root without an app.
//
// An app on its own domain is reached through /authenticate/continue, which
// hands the sign-in to that domain with a one-time code (domain_signin.go).
func (s *Server) afterAuthURL(app *store.AppView) string {
	if app == nil {
		return s.cfg.PublicURL + "/"
	}
	if d := s.domains.get(context.Background()).byApp[app.ID]; d != "" {
		return s.cfg.AuthURL + "/authenticate/continue?app=" + url.QueryEscape(app.Name)
	}
	return s.cfg.PublicURL + "/apps/" + url.PathEscape(app.Name)
}

func authAction(mode string, app *store.AppView) string {
	action := "/authenticate/" + mode
	if app != nil {
		action += "?app=" + url.QueryEscape(app.Name)
	}
	return action
}

func wantsJSON(c echo.Context) bool {
	return strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON)
}

// GET /authenticate/signin and /authenticate/signup on the auth site.
func (s *Server) authPage(mode string) echo.HandlerFunc {
	return func(c echo.Context) error {
		app, err := s.authApp(c)
		if err != nil {
			return err
		}
		return s.renderAuthForm(c, http.StatusOK, mode, app, authForm{}, nil)
	}
}

// refuseAuthForm renders the form again with why it was refused: the
// error's fields beside their inputs, its message on top when it names no
// field. A client that asks for JSON gets the error envelope (errors.go).
func (s *Server) refuseAuthForm(c echo.Context, mode string, app *store.AppView, f authForm, e *Error) error {
	errs := e.Fields
	if len(errs) == 0 {
		errs = map[string]string{"form": e.Message}
	}
	if wantsJSON(c) {
		body := map[string]any{"success": false, "message": e.Message, "error": e.Message}
		if len(e.Fields) > 0 {
			body["fields"] = e.Fields
		}
		return c.JSON(e.Status, body)
	}
	return s.renderAuthForm(c, e.Status, mode, app, f, errs)
}

func (s *Server) renderAuthForm(c echo.Context, status int, mode string, app *store.AppView, f authForm, errs map[string]string, with ...func(*AuthFormData)) error {
	var sc *Scope
	if app != nil {
		// The auth site only brands the form with the app.
		sc = &Scope{App: app, Role: store.RolePublic}
	}
	props := s.pageProps(c, sc)
	data := AuthFormData{Mode: mode, Action: authAction(mode, app), Errors: errs,
		Values: map[string]string{"email": strings.TrimSpace(f.Email), "username": strings.TrimSpace(f.Username)}}
	if app != nil {
		data.AppName = app.Name
	}
	if data.Errors == nil {
		data.Errors = map[string]string{}
	}
	if u := viewerOf(c).User; u != nil {
		data.SignedIn = u.Username
	}
	for _, w := range with {
		w(&data)
	}
	props.Data, props.Status = data, status
	return s.renderPage(c, "AuthForm", props)
}

// limitSignUp counts one sign-up per address and per e-mail; either over
// its limit answers 429 with Retry-After.
func (s *Server) limitSignUp(c echo.Context, email string) *Error {
	ctx := c.Request().Context()
	if ok, wait := s.limiter.count(ctx, "signup:addr:"+c.RealIP(), s.limits.SignUpAddress); !ok {
		return tooManyAttempts(c, wait)
	}
	if email = strings.ToLower(strings.TrimSpace(email)); email != "" {
		if ok, wait := s.limiter.count(ctx, "signup:acct:"+email, s.limits.SignUpAccount); !ok {
			return tooManyAttempts(c, wait)
		}
	}
	return nil
}

// signInAttempt is one counted sign-in: the account it names (nil when no
// account has that e-mail or username) and the counters it went on.
type signInAttempt struct {
	user *store.User
	keys []string
}

// countSignIn counts the attempt per address and per account before the
// password is checked, so parallel guesses cannot slip past the limit. The
// account counter is keyed by the user's id, so its e-mail and username
// share one; a login that names nobody is counted under that string.
func (s *Server) countSignIn(c echo.Context, login string) (*signInAttempt, error) {
	ctx := c.Request().Context()
	a := &signInAttempt{}
	addrKey := "signin:addr:" + c.RealIP()
	a.keys = append(a.keys, addrKey)
	if ok, wait := s.limiter.count(ctx, addrKey, s.limits.SignInAddress); !ok {
		return nil, tooManyAttempts(c, wait)
	}
	user, err := s.store.UserByLogin(ctx, login)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		s.limiter.refund(ctx, a.keys...)
		return nil, err
	default:
		a.user = user
	}
	acctKey := "signin:acct:login:" + strings.ToLower(strings.TrimSpace(login))
	if a.user != nil {
		acctKey = "signin:acct:user:" + a.user.ID
	}
	a.keys = append(a.keys, acctKey)
	if ok, wait := s.limiter.count(ctx, acctKey, s.limits.SignInAccount); !ok {
		return nil, tooManyAttempts(c, wait)
	}
	return a, nil
}

// POST /authenticate/signin: email or username, and password.
func (s *Server) postSignIn(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	var f authForm
	if err := c.Bind(&f); err != nil {
		return s.refuseAuthForm(c, "signin", app, f, badRequest("Could not read the form"))
	}
	errs := map[string]string{}
	if f.Password == "" {
		errs["password"] = "Enter your password"
	}
	if strings.TrimSpace(f.Email) == "" {
		errs["email"] = "Enter your email or username"
	}
	if len(errs) > 0 {
		return s.refuseAuthForm(c, "signin", app, f, fieldsError(firstOf(errs, "email", "password"), errs))
	}
	attempt, err := s.countSignIn(c, f.Email)
	var limited *Error
	if errors.As(err, &limited) && limited.Status == http.StatusTooManyRequests {
		return s.refuseAuthForm(c, "signin", app, f, limited)
	}
	if err != nil {
		return err
	}
	user, err := s.checkPassword(attempt.user, f.Password)
	if err != nil {
		return err
	}
	if user == nil {
		return s.refuseAuthForm(c, "signin", app, f, unauthorized("Invalid email, username or password"))
	}
	// Only failures count: a member who signs in often is never locked out.
	s.limiter.refund(c.Request().Context(), attempt.keys...)
	return s.startSession(c, user, app)
}

// checkPassword returns the user when the password matches, nil when the
// account is unknown or the password wrong, and an error only when the check
// itself fails. An unknown account still pays for one hash, so timing does
// not tell which accounts exist.
func (s *Server) checkPassword(user *store.User, password string) (*store.User, error) {
	if user == nil {
		_, _ = auth.VerifyPassword(s.dummyHash, password)
		return nil, nil
	}
	if user.PasswordHash == "" {
		// Cleared (an undone e-mail change): only a reset link signs in.
		_, _ = auth.VerifyPassword(s.dummyHash, password)
		return nil, nil
	}
	ok, err := auth.VerifyPassword(user.PasswordHash, password)
	if err != nil {
		return nil, &Error{Status: http.StatusInternalServerError, Message: "Something went wrong", Err: err}
	}
	if !ok {
		return nil, nil
	}
	return user, nil
}

// passwordMatches reports whether password is u's: the check every action
// that asks for the password again makes. A cleared password (an undone
// e-mail change) or an unreadable hash matches nothing.
func passwordMatches(u *store.User, password string) bool {
	if u == nil || u.PasswordHash == "" || password == "" {
		return false
	}
	ok, err := auth.VerifyPassword(u.PasswordHash, password)
	return err == nil && ok
}

// POST /authenticate/signup: email, username and password.
func (s *Server) postSignUp(c echo.Context) error {
	app, err := s.authApp(c)
	if err != nil {
		return err
	}
	var f authForm
	if err := c.Bind(&f); err != nil {
		return s.refuseAuthForm(c, "signup", app, f, badRequest("Could not read the form"))
	}
	if limited := s.limitSignUp(c, f.Email); limited != nil {
		return s.refuseAuthForm(c, "signup", app, f, limited)
	}
	errs := validateSignUp(f)
	if len(errs) == 0 {
		// A taken e-mail or username is a 409 on its field (errors.go): the
		// request is fine, the name belongs to an account.
		if e := refusal(s.store.CheckAvailable(c.Request().Context(), f.Email, f.Username), nil); e != nil {
			return s.refuseAuthForm(c, "signup", app, f, e)
		}
	}
	if len(errs) > 0 {
		return s.refuseAuthForm(c, "signup", app, f, fieldsError(firstOf(errs, "email", "username", "password"), errs))
	}
	hash, err := s.cfg.PasswordCost.Hash(f.Password)
	if err != nil {
		return &Error{Status: http.StatusInternalServerError, Message: "Something went wrong", Err: err}
	}
	user, err := s.store.CreateUserVerifying(c.Request().Context(), f.Email, f.Username, hash, accountMailContext(app))
	if e := refusal(err, nil); e != nil {
		return s.refuseAuthForm(c, "signup", app, f, e)
	}
	if err != nil {
		return err
	}
	// The form goes on to the page that says where the confirmation mail
	// went (auth_welcome.go); a JSON client is answered as for a sign-in.
	return s.startSession(c, user, app, "/authenticate/welcome"+appQuery(app))
}

// firstOf is the message of the first of fields that has one: the line a
// client that shows one message reads.
func firstOf(errs map[string]string, fields ...string) string {
	for _, f := range fields {
		if m := errs[f]; m != "" {
			return m
		}
	}
	return ""
}

func validateSignUp(f authForm) map[string]string {
	errs := map[string]string{}
	email := strings.TrimSpace(f.Email)
	if addr, err := mail.ParseAddress(email); email == "" || err != nil || addr.Address != email || len(email) > 254 {
		errs["email"] = "Enter a valid email address"
	}
	if !usernamePattern.MatchString(strings.TrimSpace(f.Username)) {
		errs["username"] = "Use 3 to 30 letters, digits or underscores"
	}
	if err := auth.ValidatePassword(f.Password); err != nil {
		errs["password"] = err.Error()
	}
	return errs
}

// startSession issues a fresh token (never reusing one the browser brought:
// that would allow session fixation), sets the cookie and sends the browser
// to the app on the main site, or to then when one is given.
func (s *Server) startSession(c echo.Context, user *store.User, app *store.AppView, then ...string) error {
	token, err := s.store.CreateSession(c.Request().Context(), user.ID, c.Request().UserAgent())
	if err != nil {
		return err
	}
	s.setSessionCookie(c, token)
	next := s.afterAuthURL(app)
	if wantsJSON(c) {
		return respond(c, http.StatusOK, SignedIn{RedirectTo: next, User: s.store.AccountUserOf(c.Request().Context(), user)})
	}
	if len(then) > 0 {
		next = then[0]
	}
	return c.Redirect(http.StatusSeeOther, next)
}

// GET /signin and /apps/:app/signin on the main site send the browser to the
// auth site, keeping the app when it exists.
func (s *Server) redirectToSignIn(c echo.Context) error {
	name := c.Param("app")
	if name == "" {
		name = c.QueryParam("app")
	}
	target := s.cfg.AuthURL + "/authenticate/signin"
	if name != "" {
		app, err := s.store.AppByIDOrName(c.Request().Context(), name)
		switch {
		case err == nil:
			target += "?app=" + url.QueryEscape(app.Name)
		case errors.Is(err, store.ErrNotFound) && c.Param("app") != "":
			return notFound("App not found")
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	return c.Redirect(http.StatusFound, target)
}

// SignedIn is data of a sign-in or sign-up asked for in JSON: the user and
// where the browser goes next.
type SignedIn struct {
	atTop
	RedirectTo string            `json:"redirectTo"`
	User       store.AccountUser `json:"user"`
}
