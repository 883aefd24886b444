package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// Error is the one error type handlers return: a status and a message that is
// safe to show. Anything else is logged and answered as a 500.
type Error struct {
	Status  int
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(status int, message string) *Error { return &Error{Status: status, Message: message} }

func badRequest(message string) *Error   { return errorf(http.StatusBadRequest, message) }
func unauthorized(message string) *Error { return errorf(http.StatusUnauthorized, message) }
func forbidden(message string) *Error    { return errorf(http.StatusForbidden, message) }
func notFound(message string) *Error     { return errorf(http.StatusNotFound, message) }

// wrapLoad turns a loader error into a 404 when the row is missing.
func wrapLoad(err error, missing string) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound(missing)
	}
	return err
}

// handleError is Echo's one error handler: JSON {success:false,message} for
// /api/*, an HTML page otherwise. Internal error text never reaches the client.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, message := http.StatusInternalServerError, "Something went wrong"
	var appErr *Error
	var echoErr *echo.HTTPError
	switch {
	case errors.As(err, &appErr):
		status, message = appErr.Status, appErr.Message
	case errors.As(err, &echoErr):
		status = echoErr.Code
		if m, ok := echoErr.Message.(string); ok {
			message = m
		} else {
			message = http.StatusText(status)
		}
	}
	if status >= 500 {
		s.logger.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		_ = c.JSON(status, map[string]any{"success": false, "message": message})
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	s.renderErrorPage(c, status, message)
}
