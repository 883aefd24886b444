package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// A card member manages the card and reads the invoices in Stripe's
// customer portal (issue 40 item 3): a Billing Portal session for the
// customer whose subscription renews the membership, opened from the
// membership page (a form, so it works without JavaScript) or the JSON API.
// Changes made there come back as webhooks (membership_change.go).

// portalOpener is a card provider with a customer portal.
type portalOpener interface {
	PortalURL(ctx context.Context, ref, returnURL string) (string, error)
}

// PortalData answers the portal call: where to send the member.
type PortalData struct {
	URL string `json:"url"`
}

const msgNoCardMembership = "Your membership is not renewed by a card: there is nothing to manage in the card portal"

// portalURL opens the portal for the viewer's card membership of the app.
func (s *Server) portalURL(c echo.Context, sc *Scope) (string, error) {
	if sc.User == nil {
		return "", unauthorized("Authentication required")
	}
	ctx := c.Request().Context()
	sub, err := s.store.SubscriptionOf(ctx, sc.App.ID, sc.User.ID)
	if err != nil {
		return "", err
	}
	if sub == nil || sub.ProviderRef == "" || sub.Provider == store.WalletMethod || sub.Provider == store.CompProvider ||
		(sub.Status != store.SubActive && sub.Status != store.SubPastDue) {
		return "", &Error{Status: http.StatusConflict, Message: msgNoCardMembership}
	}
	provider, err := s.payments.Get(sub.Provider)
	if err != nil {
		return "", moneyError(err)
	}
	opener, ok := provider.(portalOpener)
	if !ok {
		return "", &Error{Status: http.StatusConflict, Message: msgNoCardMembership}
	}
	back := s.appBaseURL(ctx, sc.App.ID, sc.App.Name) + "/membership"
	u, err := opener.PortalURL(ctx, sub.ProviderRef, back)
	if err != nil {
		return "", moneyError(err)
	}
	return u, nil
}

// POST /api/memberships/apps/:appId/portal
func (s *Server) apiMembershipPortal(c echo.Context) error {
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return err
	}
	u, err := s.portalURL(c, sc)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, PortalData{URL: u})
}

// POST /apps/:app/membership/portal: the membership page's "Manage card and
// invoices" button.
func (s *Server) formMembershipPortal(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	u, err := s.portalURL(c, sc)
	if err != nil {
		return formError(c, err, membershipPath(sc.App.Name))
	}
	return c.Redirect(http.StatusSeeOther, u)
}
