package server

import (
	"net/http"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// Every JSON answer is built here: {success, data, pagination?, message?}
// on success and {success:false, message, error} on failure (errors.go).

// atTop, embedded in a data struct, answers the struct's SPEC-named members
// (topLevel) at the top level of the body as well. Such a struct lists its
// members in the order of their names: the map it replaced was marshalled
// that way, and the bytes of the answer stay the same.
type atTop struct{}

func (atTop) answeredAtTop() {}

type answeredAtTop interface{ answeredAtTop() }

// topLevel lists the members SPEC.md section 7 reads without `data.`:
// clients already read them there, so they are answered in both places.
var topLevel = map[string]bool{
	"posts": true, "pagination": true, "users": true, "replies": true,
	"presignedUploadUrl": true, "media": true, "user": true, "publicKey": true,
	"paypalOrderId": true, "approvalUrl": true,
}

type envelope struct {
	Success    bool              `json:"success"`
	Data       any               `json:"data,omitempty"`
	Pagination *store.Pagination `json:"pagination,omitempty"`
	Message    string            `json:"message,omitempty"`
}

func envelopeOf(data any, p *store.Pagination, message string) any {
	if _, ok := data.(answeredAtTop); !ok {
		return envelope{Success: true, Data: data, Pagination: p, Message: message}
	}
	out := map[string]any{"success": true, "data": data}
	v := reflect.ValueOf(data)
	for i := 0; i < v.NumField(); i++ {
		name, opts, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		// A member data leaves out is left out of the top level too.
		if omit := strings.Contains(opts, "omitempty") && v.Field(i).IsZero(); topLevel[name] && !omit {
			out[name] = v.Field(i).Interface()
		}
	}
	if p != nil {
		out["pagination"] = p
	}
	if message != "" {
		out["message"] = message
	}
	return out
}

// respond answers status with data.
func respond(c echo.Context, status int, data any) error {
	sendInOnePiece(c.Request())
	return c.JSON(status, envelopeOf(data, nil, ""))
}

// respondPage answers a list page: data and its pagination at the top level.
func respondPage(c echo.Context, data any, p store.Pagination) error {
	sendInOnePiece(c.Request())
	return c.JSON(http.StatusOK, envelopeOf(data, &p, ""))
}

// respondDone answers a write that returns no data, with a message.
func respondDone(c echo.Context, message string) error {
	return c.JSON(http.StatusOK, envelopeOf(nil, nil, message))
}

// respondMessage answers data with a message.
func respondMessage(c echo.Context, status int, data any, message string) error {
	return c.JSON(status, envelopeOf(data, nil, message))
}
