package server

import (
	"github.com/labstack/echo/v4"
)

// CreateData tells the create pages where to post.
type CreateData struct {
	CommunityID string `json:"communityId"`
	// After a refused form post (no JavaScript): why, and what was typed.
	Error   string `json:"error,omitempty"`
	Content string `json:"content,omitempty"`
}

// GET /apps/:app/create-post and /apps/:app/create-story. The form itself
// checks permissions for display; the API enforces them.
func (s *Server) pageCreate(page string) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc := scopeFromPage(c)
		props := s.pageProps(c, sc)
		data := CreateData{}
		if sc.requireFeature(featureCommunity) == nil {
			data.CommunityID = sc.App.Community.ID
		}
		if sc.Ban != nil {
			// A banned or silenced member is told why before they write.
			data.Error = banMessage(sc.Ban)
		}
		props.Data = data
		return s.renderPage(c, page, props)
	}
}
