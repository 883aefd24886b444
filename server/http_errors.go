package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/minio/minio-go/v7"

	"marquee/server/media"
	"marquee/server/payments"
	"marquee/store"
)

// Error is the one error type handlers return: a status and a message that is
// safe to show. Domain errors (store.Err*, payments.Err*) are turned into
// one by answer; anything else is logged and answered as a 500.
type Error struct {
	Status  int
	Message string
	// Fields names the form fields at fault and what to say beside each:
	// the JSON envelope reports them as `fields`, a form page re-renders
	// them next to its inputs.
	Fields map[string]string
	Err    error
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

// fieldError is a 400 about one form field.
func fieldError(field, message string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: message, Fields: map[string]string{field: message}}
}

// fieldsError is a 400 about several form fields; message sums them up for
// clients that show one line.
func fieldsError(message string, fields map[string]string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: message, Fields: fields}
}

// domainRule is one row of the mapping from domain errors to HTTP: the one
// status every call answers for err, the message shown unless the call words
// it its own way (SPEC.md section 8), and the form field it is about.
type domainRule struct {
	err     error
	status  int
	message string
	field   string
}

// domainRules is the one mapping from the store's and the providers' errors
// to statuses. The first row that matches (errors.Is) wins, so a more
// specific error comes before one it wraps. store.ErrInvalid (400, its own
// text) and payments.DeclinedError (402, the provider's reason) carry their
// message and are handled in answer.
func domainRules() []domainRule {
	return []domainRule{
		{store.ErrNotFound, http.StatusNotFound, "Not found", ""},
		{store.ErrForbidden, http.StatusForbidden, "You do not have permission to do that", ""},
		{store.ErrTicketRequired, http.StatusForbidden, "This event requires a ticket", ""},
		{store.ErrNoSubscription, http.StatusNotFound, "You have no active membership in this app", ""},
		{store.ErrTokenInvalid, http.StatusBadRequest, "This link is invalid or has expired", ""},
		{store.ErrEmailNotVerified, http.StatusForbidden, msgVerifyFirst, ""},
		{store.ErrOwnsApp, http.StatusConflict, "You own an app: hand it over or delete it before deleting your account", ""},
		{store.ErrEmailTaken, http.StatusConflict, "An account with this email already exists", "email"},
		{store.ErrUsernameTaken, http.StatusConflict, "This username is taken", "username"},
		{store.ErrDomainTaken, http.StatusConflict, "This domain is already used by another app: remove it there first, or ask the operator", "domain"},
		// The order is in a status that does not allow the move: the request
		// is well formed, the order's state refuses it.
		{store.ErrIllegalTransition, http.StatusConflict, "This order cannot be changed that way in its current status", ""},
		// A membership plan archived, gone or still a draft: never bought.
		{store.ErrPlanOffSale, http.StatusConflict, "This membership plan is not on sale", ""},
		{store.ErrPaidMember, http.StatusConflict, "This member pays for a membership: they change or cancel it themselves", ""},
		// Offers and trials (store/offers.go, store/trials.go): a code the
		// app does not have or that is not for the tier is the request's
		// fault; one expired, used up or used before is its state.
		{store.ErrOfferUnknown, http.StatusBadRequest, "This code is not valid for this app", "offerCode"},
		{store.ErrOfferNotForTier, http.StatusBadRequest, "This code is not for this tier", "offerCode"},
		{store.ErrOfferExpired, http.StatusConflict, "This code has expired", "offerCode"},
		{store.ErrOfferUsedUp, http.StatusConflict, "This code has been used up", "offerCode"},
		{store.ErrOfferRedeemed, http.StatusConflict, "You have already used this code", "offerCode"},
		{store.ErrTrialTaken, http.StatusConflict, "You have already had this app's free trial", ""},
		{store.ErrTrialNeedsCard, http.StatusConflict, "This tier's free trial starts with a card", ""},
		{store.ErrDonationClosed, http.StatusConflict, "This donation can no longer be paid", ""},
		{store.ErrTopupClosed, http.StatusConflict, msgTopupClosed, ""},
		// A provider reported a payment that is not the order's total: the
		// order's state, not the request, is at odds with it.
		{store.ErrAmountMismatch, http.StatusConflict, "Payment amount does not match the order total", ""},
		{store.ErrReferenceReused, http.StatusConflict, "This payment reference was already used", ""},
		{store.ErrInsufficientFunds, http.StatusPaymentRequired, msgNotEnoughWallet, ""},
		// A refusal without a reason is the wallet's: too little in it.
		{payments.ErrDeclined, http.StatusPaymentRequired, msgNotEnoughWallet, ""},
		{payments.ErrNotThisOrder, http.StatusConflict, msgPaymentForeign, ""},
		{payments.ErrDisabled, http.StatusBadRequest, msgMethodOff, ""},
		{payments.ErrNotSupported, http.StatusBadRequest, "This payment method cannot do that", ""},
		{payments.ErrInvalidWebhook, http.StatusBadRequest, msgInvalidSignature, ""},
		{payments.ErrNoApprovalURL, http.StatusBadGateway, payments.ErrNoApprovalURL.Error(), ""},
		{payments.ErrProvider, http.StatusBadGateway, "The payment provider could not be reached. Please try again.", ""},
		// Uploads: the stored bytes are not what the media record declared.
		{media.ErrIncomplete, http.StatusBadRequest, "Media upload is not complete", ""},
		{media.ErrSizeMismatch, http.StatusBadRequest, msgUploadSize, ""},
		{media.ErrSize, http.StatusBadRequest, msgUploadSize, ""},
		{media.ErrTypeMismatch, http.StatusBadRequest, msgUploadType, ""},
		{media.ErrRead, http.StatusBadRequest, "Upload interrupted", ""},
		{media.ErrBadSignature, http.StatusForbidden, "Invalid or expired URL", ""},
		// A stored file that is gone: missing, not the store being down
		// (that is a 503 in classify).
		{media.ErrNotFound, http.StatusNotFound, "Not found", ""},
	}
}

// wording is how one call words domain errors (SPEC.md section 8 names
// 'Order not found' in one place and 'No order found. Please try again.' in
// another). It changes the message, never the status.
type wording map[error]string

// answer turns a domain error into the *Error every call answers for it, in
// the call's words. An *Error is already decided and passes unchanged; an
// error the mapping does not know passes unchanged too (a 500, or a 503
// when a dependency is down, in classify).
func answer(err error, words wording) error {
	if err == nil {
		return nil
	}
	var appErr *Error
	if errors.As(err, &appErr) {
		return err
	}
	var inv *store.ErrInvalid
	if errors.As(err, &inv) {
		e := &Error{Status: http.StatusBadRequest, Message: inv.Msg, Err: err}
		if inv.Field != "" {
			e.Fields = map[string]string{inv.Field: inv.Msg}
		}
		return e
	}
	var tier *store.ErrTierChange
	if errors.As(err, &tier) {
		// The membership's state refuses the move; the text says what to do.
		return &Error{Status: http.StatusConflict, Message: tier.Msg, Err: err}
	}
	var declined *payments.DeclinedError
	if errors.As(err, &declined) {
		return &Error{Status: http.StatusPaymentRequired, Message: declined.Message(), Err: err}
	}
	for _, r := range domainRules() {
		if !errors.Is(err, r.err) {
			continue
		}
		msg := r.message
		if w, ok := words[r.err]; ok {
			msg = w
		}
		e := &Error{Status: r.status, Message: msg, Err: err}
		if r.field != "" {
			e.Fields = map[string]string{r.field: msg}
		}
		return e
	}
	return err
}

// refusal is the 4xx a form page shows beside its fields (nil for anything
// else, which the error handler answers).
func refusal(err error, words wording) *Error {
	var e *Error
	if errors.As(answer(err, words), &e) && e.Status >= 400 && e.Status < 500 {
		return e
	}
	return nil
}

// wrapLoad turns a loader error into its answer, a missing row worded as
// missing.
func wrapLoad(err error, missing string) error {
	return answer(err, wording{store.ErrNotFound: missing})
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
	err = answer(err, nil)
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
	if abandoned(c, err) {
		// The browser went away (a closed tab, a cancelled fetch): nothing
		// failed on our side and nobody reads the answer.
		s.logger.DebugContext(c.Request().Context(), "client went away", "path", c.Request().URL.Path, "err", err)
		return
	}
	status, message := classify(err)
	var fieldErrs map[string]string
	if appErr := (*Error)(nil); errors.As(answer(err, nil), &appErr) {
		fieldErrs = appErr.Fields
	}
	if status >= 500 {
		s.logger.ErrorContext(c.Request().Context(), "request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "status", status, "err", err)
	}
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "5")
	}
	if jsonPath(c.Request().URL.Path) {
		if message == "Page not found" {
			message = "Not found"
		}
		body := map[string]any{"success": false, "message": message, "error": message}
		if len(fieldErrs) > 0 {
			body["fields"] = fieldErrs
		}
		_ = c.JSON(status, body)
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	s.renderErrorPage(c, status, message)
}
