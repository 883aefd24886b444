package server

import "github.com/labstack/echo/v4"

// ComingSoonData is a placeholder page inside the app shell, so every
// footer tab leads somewhere (SPEC.md section 2: chat content is not shown).
type ComingSoonData struct {
	Section string `json:"section"`
	Title   string `json:"title"`
	Text    string `json:"text"`
}

func (s *Server) pageComingSoon(section, title, text string) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc := scopeFromPage(c)
		props := s.pageProps(c, sc)
		props.Data = ComingSoonData{Section: section, Title: title, Text: text}
		return s.renderPage(c, "ComingSoon", props)
	}
}
