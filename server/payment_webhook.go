package server

import (
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/server/payments"
)

// POST /api/webhooks/stripe and /api/webhooks/paypal: the providers' own
// word about payments. The signature decides (a forged or stale delivery is
// 400 and changes nothing); each event id is applied once. A failure of
// ours answers 5xx so the provider delivers again later.
func (s *Server) apiWebhook(method string) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := s.payments.Get(method)
		if err != nil {
			return badRequest("Payment method not configured")
		}
		wh, ok := p.(payments.Webhooks)
		if !ok {
			return badRequest("Payment method not configured")
		}
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return badRequest("Invalid request body")
		}
		res, err := wh.HandleWebhook(c.Request().Context(), body, c.Request().Header)
		if errors.Is(err, payments.ErrInvalidWebhook) {
			s.logger.Warn("webhook refused", "provider", method, "err", err)
			return answer(err, nil)
		}
		if err != nil {
			return err
		}
		data := WebhookReceived{Received: true, Status: res.Status}
		if res.Order != nil {
			data.OrderID, data.OrderStatus = res.Order.ID, res.Order.Status
		}
		if res.Donation != nil {
			data.DonationID, data.DonationStatus = res.Donation.ID, res.Donation.Status
		}
		return respond(c, http.StatusOK, data)
	}
}

// WebhookReceived is data of a payment webhook: what the delivery did to
// the order or the donation it was about, if any.
type WebhookReceived struct {
	DonationID     string `json:"donationId,omitempty"`
	DonationStatus string `json:"donationStatus,omitempty"`
	OrderID        string `json:"orderId,omitempty"`
	OrderStatus    string `json:"orderStatus,omitempty"`
	Received       bool   `json:"received"`
	Status         string `json:"status"`
}
