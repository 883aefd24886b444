package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// sectionNewsletter is the studio's newsletter screen (issue 44): how the
// app mails its posts, how each mailed post went, the addresses that no
// longer take mail, and a test mail of a draft to oneself.
const sectionNewsletter = "newsletter"

// StudioNewsletter is the newsletter screen.
type StudioNewsletter struct {
	Settings store.NewsletterSettings `json:"settings"`
	// TimeZone is the app's (an IANA name): schedules and the digest hour
	// are read in it.
	TimeZone      string                       `json:"timeZone"`
	Posts         []store.NewsletterPostReport `json:"posts"`
	Undeliverable []store.UndeliverableMember  `json:"undeliverable"`
	// TestTo is where a test mail goes: the viewer's own address.
	TestTo string `json:"testTo"`
}

// NewsletterSettingsInput is the settings form and the JSON call's body.
type NewsletterSettingsInput struct {
	SenderName string `json:"senderName"`
	ReplyTo    string `json:"replyTo"`
	DefaultOn  bool   `json:"defaultOn"`
	DigestDay  int    `json:"digestDay"`
	DigestHour int    `json:"digestHour"`
	TimeZone   string `json:"timeZone"`
}

func (in NewsletterSettingsInput) settings() store.NewsletterSettings {
	return store.NewsletterSettings{SenderName: in.SenderName, ReplyTo: in.ReplyTo, DefaultOn: in.DefaultOn,
		DigestDay: in.DigestDay, DigestHour: in.DigestHour}
}

// studioNewsletter loads the screen (the page and GET .../newsletter).
func (s *Server) studioNewsletter(c echo.Context, sc *Scope) (*StudioNewsletter, error) {
	ctx := c.Request().Context()
	n := &StudioNewsletter{Settings: sc.App.Settings.Newsletter, TimeZone: sc.App.Settings.Basic.TimeZone, TestTo: sc.User.Email}
	var err error
	if n.Posts, err = s.store.NewsletterReport(ctx, sc.App.ID, store.NewsletterReportLimit); err != nil {
		return nil, err
	}
	if n.Undeliverable, err = s.store.UndeliverableMembers(ctx, sc.App.ID, 100); err != nil {
		return nil, err
	}
	return n, nil
}

// GET /apps/:app/studio/newsletter
func (s *Server) pageStudioNewsletter(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	n, err := s.studioNewsletter(c, sc)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionNewsletter, Newsletter: n}, http.StatusOK)
}

// POST /apps/:app/studio/newsletter (senderName, replyTo, defaultOn,
// digestDay, digestHour, timeZone)
func (s *Server) formStudioNewsletter(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	in, e := newsletterForm(c)
	if e == nil {
		err = s.store.SetNewsletterSettings(c.Request().Context(), sc.App.ID, strings.TrimSpace(in.TimeZone), in.settings())
		e = refusal(err, nil)
	}
	if e != nil {
		n, lerr := s.studioNewsletter(c, sc)
		if lerr != nil {
			return lerr
		}
		// The form comes back as it was sent.
		n.Settings, n.TimeZone = in.settings(), in.TimeZone
		return s.renderStudio(c, sc, StudioData{Section: sectionNewsletter, Newsletter: n, Form: "newsletter", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/newsletter", "saved")
}

// newsletterForm reads the settings form; numbers that are not numbers are
// refused by field.
func newsletterForm(c echo.Context) (NewsletterSettingsInput, *Error) {
	in := NewsletterSettingsInput{SenderName: c.FormValue("senderName"), ReplyTo: c.FormValue("replyTo"),
		DefaultOn: c.FormValue("defaultOn") != "", TimeZone: c.FormValue("timeZone")}
	var err error
	if in.DigestDay, err = strconv.Atoi(c.FormValue("digestDay")); err != nil {
		return in, fieldError("digestDay", "The digest day is a weekday")
	}
	if in.DigestHour, err = strconv.Atoi(c.FormValue("digestHour")); err != nil {
		return in, fieldError("digestHour", "The digest hour is from 0 to 23")
	}
	return in, nil
}

// POST /apps/:app/studio/newsletter/test (messageId): mails the post,
// marked as a test, to the viewer's own address.
func (s *Server) formStudioNewsletterTest(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	err = s.store.QueueNewsletterTest(c.Request().Context(), sc.App.ID, c.FormValue("messageId"), sc.User.Email)
	if e := refusal(err, nil); e != nil {
		n, lerr := s.studioNewsletter(c, sc)
		if lerr != nil {
			return lerr
		}
		return s.renderStudio(c, sc, StudioData{Section: sectionNewsletter, Newsletter: n, Form: "newsletter-test", Error: e.Message}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/newsletter", "test-sent")
}

// GET /api/studio/apps/:appId/newsletter
func (s *Server) apiStudioNewsletter(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	n, err := s.studioNewsletter(c, sc)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, n)
}

// PUT /api/studio/apps/:appId/newsletter
func (s *Server) apiStudioSetNewsletter(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var in NewsletterSettingsInput
	if err := c.Bind(&in); err != nil {
		return badRequest("Invalid request body")
	}
	if err := s.store.SetNewsletterSettings(c.Request().Context(), sc.App.ID, strings.TrimSpace(in.TimeZone), in.settings()); err != nil {
		return err
	}
	// The screen as it is now, read again as the GET reads it.
	return s.apiStudioNewsletter(c)
}

// POST /api/studio/apps/:appId/newsletter/test {"messageId"}
func (s *Server) apiStudioNewsletterTest(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var req struct {
		MessageID string `json:"messageId"`
	}
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if err := s.store.QueueNewsletterTest(c.Request().Context(), sc.App.ID, req.MessageID, sc.User.Email); err != nil {
		return err
	}
	return respondMessage(c, http.StatusAccepted, nil, "Test mail on its way to "+sc.User.Email)
}
