package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

type readiness interface {
	Ready(ctx context.Context) error
}

// GET /readyz (both sites) tells a load balancer or an operator what this
// instance depends on and how each is: database, redis, objectStore, each
// "ok", "down" or "off" (not configured). 503 when the instance cannot do
// its work (database or object store down, or shutting down); Redis down
// is 200 with status "degraded", as the product runs without it (slower).
// /healthz stays the cheap liveness check.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	state := func(err error) string {
		if err != nil {
			return "down"
		}
		return "ok"
	}
	db := state(store.Ping(ctx, s.store.DB()))
	redis := "off"
	if s.store.Redis() != nil {
		redis = state(s.store.Redis().Ping(ctx).Err())
	}
	objects := "off"
	if r, ok := s.files.(readiness); ok {
		objects = state(r.Ready(ctx))
	}
	status, code := "ok", http.StatusOK
	switch {
	case s.draining.Load():
		status, code = "shutting down", http.StatusServiceUnavailable
	case db != "ok" || objects == "down":
		status, code = "unavailable", http.StatusServiceUnavailable
	case redis == "down":
		status = "degraded"
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(code, map[string]any{"status": status, "database": db, "redis": redis, "objectStore": objects})
}

// queryBudget bounds each database call of the request to
// DB_REQUEST_TIMEOUT (store.WithQueryBudget).
func (s *Server) queryBudget(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if d := s.cfg.DBRequestTimeout; d > 0 {
			r := c.Request()
			c.SetRequest(r.WithContext(store.WithQueryBudget(r.Context(), d)))
		}
		return next(c)
	}
}
