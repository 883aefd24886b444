package server

import (
	"github.com/labstack/echo/v4"
)

// GET /sw.js: the service worker (public/sw.js). Served at the root so its
// scope covers every app, and revalidated on every load so a new version
// reaches browsers at once.
func (s *Server) serviceWorker(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-cache")
	c.Response().Header().Set("Content-Type", "text/javascript; charset=utf-8")
	return c.File("public/sw.js")
}
