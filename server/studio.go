package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// The creator studio (/apps/{app}/studio): one screen per section, every
// form a plain POST that redirects back (or re-renders with its field
// errors), so it all works without JavaScript.

const (
	msgStudioOnly  = "Only the app's creator and admins can open the studio"
	msgRoleChanged = "This member's role changed meanwhile; reload and try again"
	msgCannotGrant = "You cannot give this member that role"
)

// Studio sections.
const (
	sectionProfile   = "profile"
	sectionFeatures  = "features"
	sectionPlans     = "plans"
	sectionMembers   = "members"
	sectionAnalytics = "analytics"
)

// StudioData is what every studio screen renders: its section, what the
// last form said, and the section's own data.
type StudioData struct {
	Section string            `json:"section"`
	Notice  string            `json:"notice"`
	Error   string            `json:"error"`
	Fields  map[string]string `json:"fields"`
	// Form names which form the error is about (a screen can have several).
	Form      string             `json:"form"`
	Profile   *StudioProfile     `json:"profile,omitempty"`
	Features  *StudioFeatures    `json:"features,omitempty"`
	Plans     []store.StudioPlan `json:"plans,omitempty"`
	PlanEdit  *StudioPlanForm    `json:"planEdit,omitempty"`
	Members   *StudioMembers     `json:"members,omitempty"`
	Analytics *store.Analytics   `json:"analytics,omitempty"`
	Payouts   *StudioPayouts     `json:"payouts,omitempty"`
	PayPal    *StudioPayPal      `json:"paypal,omitempty"`
	// Newsletter is the newsletter screen (studio_newsletter.go).
	Newsletter *StudioNewsletter `json:"newsletter,omitempty"`
	// Theme is the Theme screen (studio_theme.go).
	Theme *StudioTheme `json:"theme,omitempty"`
	// Shipping is the shipping screen (studio_shipping.go).
	Shipping *StudioShipping `json:"shipping,omitempty"`
	// AppData is the export and delete screen (studio_data.go).
	AppData *StudioAppData `json:"appData,omitempty"`
	// Offers is the offers editor (studio_offers.go).
	Offers *StudioOffers `json:"offers,omitempty"`
	// Launch is the launch checklist (studio_launch.go).
	Launch *store.Launch `json:"launch,omitempty"`
	// Domain is the custom domain screen (studio_domain.go).
	Domain *StudioDomain `json:"domain,omitempty"`
}

// requireStudio answers 401 to visitors and 403 to anyone below ADMIN.
func (sc *Scope) requireStudio() error {
	if sc.User == nil {
		return unauthorized("Authentication required")
	}
	if !access.CanOpenStudio(sc.Role) {
		return forbidden(msgStudioOnly)
	}
	return nil
}

// studioScope is the page scope of a studio screen or form, refused for
// those the access table keeps out.
func studioScope(c echo.Context) (*Scope, error) {
	sc := scopeFromPage(c)
	if sc.User == nil && c.Request().Method == http.MethodGet {
		return nil, unauthorized("Authentication required")
	}
	return sc, sc.requireStudio()
}

// apiStudioScope is the same for the JSON calls, by app id or name.
func (s *Server) apiStudioScope(c echo.Context) (*Scope, error) {
	sc, err := s.scopeOf(c, c.Param("appId"))
	if err != nil {
		return nil, err
	}
	return sc, sc.requireStudio()
}

var studioNotices = map[string]string{
	"created": "Your app is ready, and only you and your staff can see it. Follow the checklist, then publish it.",
	// Launch (studio_launch.go).
	"published":   "Your app is published: everyone can open it now",
	"unpublished": "Your app is unpublished: only its staff can open it",
	"saved":       "Saved",
	"archived":    "Plan archived: members who hold it keep it until it ends",
	"role":        "Role changed",
	"removed":     "Member removed",
	// The wallet (studio_wallet.go).
	"credited":        "Credit added to the member's wallet",
	"gift-given":      "Membership given: the member has been told",
	"gift-ended":      "Gift ended: the member follows the app again",
	"credit-replayed": "That credit was already given: nothing was added twice",
	"welcome-saved":   "Welcome credit saved",
	// Payouts (studio_payouts.go).
	"payouts-ready":   "Your Stripe account is connected: card payments go to it",
	"payouts-pending": "Stripe is still checking your details; this page updates when it is done",
	"payouts-none":    "Connect a Stripe account first",
	// Newsletter (studio_newsletter.go).
	"test-sent": "Test mail on its way to your address",
	// Shipping (studio_shipping.go).
	"zone-saved":   "Shipping zone saved",
	"zone-deleted": "Shipping zone deleted",
	// Custom domain (studio_domain.go).
	"domain-added":      "Domain added: create the DNS records below; we check them every few minutes",
	"domain-verified":   "Domain verified: your app is served there now",
	"domain-unverified": "Not verified yet: see what the check found below",
	"domain-none":       "Add a domain first",
	"domain-removed":    "Domain removed: your app is back at its address on this site",
	// Export and delete (studio_data.go).
	"export-requested": "Export on its way: we mail you a link when the archive is ready",
	// Offers (studio_offers.go).
	"offer-created":     "Code created: members can use it on the membership page",
	"offer-deactivated": "Code deactivated: it can no longer be used",
	"offer-activated":   "Code active again",
}

func (s *Server) renderStudio(c echo.Context, sc *Scope, d StudioData, status int) error {
	if d.Fields == nil {
		d.Fields = map[string]string{}
	}
	if d.Notice == "" {
		d.Notice = studioNotices[c.QueryParam("notice")]
	}
	props := s.pageProps(c, sc)
	props.Data, props.Status = d, status
	// A studio screen is the creator's own: never kept by a shared cache.
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.renderPage(c, "Studio", props)
}

// studioBack redirects to a studio screen after a successful form.
func studioBack(c echo.Context, sc *Scope, path, notice string) error {
	target := appBasePath(c.Request(), sc.App.Name) + "/studio" + path
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return c.Redirect(http.StatusSeeOther, target+sep+"notice="+url.QueryEscape(notice))
}

// formValues are a repeated form field's values (name="x" several times).
func formValues(c echo.Context, name string) []string {
	f, err := c.FormParams()
	if err != nil {
		return nil
	}
	return f[name]
}
