package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/minio/minio-go/v7"

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

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// jsonPath reports whether path is answered in JSON: the API, and the
// presigned upload target that browsers PUT files to.
func jsonPath(path string) bool {
	return path == "/api" || strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/media-upload/")
}

// classify turns any error into the status and safe message the client gets.
// A dependency that is down (database, cache, object store) is a 503 the
// client may retry, never a 4xx that blames the request or a bare 500.
func classify(err error) (int, string) {
	var appErr *Error
	var echoErr *echo.HTTPError
	switch {
	case errors.As(err, &appErr):
		if appErr.Status >= 500 && appErr.Status != http.StatusServiceUnavailable && store.IsUnavailable(appErr.Err) {
			return http.StatusServiceUnavailable, unavailableMessage
		}
		return appErr.Status, appErr.Message
	case errors.As(err, &echoErr):
		switch echoErr.Code {
		case http.StatusNotFound:
			return echoErr.Code, "Page not found"
		case http.StatusMethodNotAllowed:
			return echoErr.Code, "Method not allowed"
		case http.StatusRequestEntityTooLarge:
			return echoErr.Code, "Request body too large"
		}
		if m, ok := echoErr.Message.(string); ok {
			return echoErr.Code, m
		}
		return echoErr.Code, http.StatusText(echoErr.Code)
	case store.IsUnavailable(err) || objectStoreDown(err):
		return http.StatusServiceUnavailable, unavailableMessage
	}
	return http.StatusInternalServerError, "Something went wrong"
}

// objectStoreDown reports an S3 server error (its 5xx answers): the object
// store is failing, not the request.
func objectStoreDown(err error) bool {
	var s3Err minio.ErrorResponse
	return errors.As(err, &s3Err) && s3Err.StatusCode >= 500
}

const unavailableMessage = "Service temporarily unavailable. Please try again in a moment."

// handleError is Echo's one error handler: {success:false, message, error}
// under /api (SPEC.md section 8: messaging screens read `error`, store
// screens read `message`), an HTML page otherwise. Internal error text never
// reaches the client.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, message := classify(err)
	if status >= 500 {
		s.logger.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "status", status, "err", err)
	}
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "5")
	}
	if jsonPath(c.Request().URL.Path) {
		if message == "Page not found" {
			message = "Not found"
		}
		_ = c.JSON(status, map[string]any{"success": false, "message": message, "error": message})
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	s.renderErrorPage(c, status, message)
}
