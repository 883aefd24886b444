package server

import (
	"github.com/labstack/echo/v4"

	"marquee/store"
)

// CreateEventData tells the create-event form where to post and what to offer.
type CreateEventData struct {
	Types []string `json:"types"`
}

// GET /apps/:app/create-event. The form shows the featured checkbox only
// when the viewer may feature (flags); the API enforces every rule.
func (s *Server) pageCreateEvent(c echo.Context) error {
	sc := scopeFromPage(c)
	if err := sc.requireFeature(featureEvents); err != nil {
		return err
	}
	props := s.pageProps(c, sc)
	props.Data = CreateEventData{Types: store.EventTypes}
	return s.renderPage(c, "CreateEvent", props)
}
