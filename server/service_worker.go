package server

import (
	"github.com/labstack/echo/v4"
)

// GET /sw.js on the main site: the service worker (public/sw.js) of scope
// "/" that earlier versions registered there for every app at once. It
// stays so those registrations keep updating and keep receiving the pushes
// of subscriptions they hold; pages no longer register it
// (islands/lib/worker.ts unregisters it once it holds none). Revalidated
// on every load so a new version reaches browsers at once.
func (s *Server) serviceWorker(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-cache")
	c.Response().Header().Set("Content-Type", "text/javascript; charset=utf-8")
	file := s.cfg.ServiceWorkerFile
	if file == "" {
		file = "public/sw.js"
	}
	return c.File(file)
}

// GET /apps/:app/sw.js, and /sw.js on the app's verified domain (which
// routeHosts maps here): the app's own service worker on that origin
// (issue 42 item 5). Its scope is the app and nothing wider: /apps/{name}/
// on the main site (the script's folder, which keeps /apps/demo2/ out of
// demo's worker), "/" on the domain, where the app is the whole site.
// Service-Worker-Allowed says so too. A push subscription belongs to the
// worker that made it, so each origin has its own (enable-push records it).
func (s *Server) appServiceWorker(c echo.Context) error {
	view, err := s.appAsset(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Service-Worker-Allowed", appBasePath(c.Request(), view.Name)+"/")
	return s.serviceWorker(c)
}
