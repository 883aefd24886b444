package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// The profile's forms for browsers without JavaScript: unfollow, sign out
// and the profile picture. Each writes through the API's rule and sends the
// browser on (POST, then GET).

// POST /apps/:app/unfollow: back to the profile.
func (s *Server) formUnfollow(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	if err := s.unfollow(c, sc, sc.User.ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/profile")
}

// POST /apps/:app/signout ends the session and goes to the sign-in page
// with the app (SPEC.md section 2), as the island does after its call.
func (s *Server) formSignOut(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := s.signOut(c); err != nil {
		return err
	}
	return s.signInRedirect(c, sc)
}

// POST /apps/:app/profile/picture (multipart, field picture) makes the
// chosen image the profile picture. A refusal is shown on the profile.
func (s *Server) formProfilePicture(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	back := appBasePath(c.Request(), sc.App.Name) + "/profile"
	m, err := s.saveFormFile(c, "picture", "profile", nil, sc.User.ID)
	if e, ok := err.(*Error); ok && e.Status < 500 {
		code := "failed"
		for k, msg := range pictureNotices {
			if msg == e.Message {
				code = k
			}
		}
		return c.Redirect(http.StatusSeeOther, back+"?picture="+code)
	}
	if err != nil {
		return err
	}
	if m == nil {
		return c.Redirect(http.StatusSeeOther, back+"?picture=type")
	}
	if err := s.store.SetProfilePicture(c.Request().Context(), sc.User.ID, m.ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, back+"?picture=ok")
}

// pictureNotices are the profile's words after a picture form (SPEC.md
// sections 5 and 8), by the code the redirect carries: the address names a
// code, never the text, so nobody can put words on someone's profile page.
var pictureNotices = map[string]string{
	"ok":     "Profile picture uploaded successfully!",
	"type":   "Please select an image file",
	"size":   "File size must be less than 5MB",
	"failed": "Failed to upload profile picture. Please try again.",
}
