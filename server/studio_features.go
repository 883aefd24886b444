package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// StudioFeatures is the Features form, and what a non-subscriber sees with
// the chosen gating (the preview).
type StudioFeatures struct {
	Community         bool                 `json:"community"`
	AllowReactions    bool                 `json:"allowReactions"`
	AllowComments     bool                 `json:"allowComments"`
	Stories           bool                 `json:"stories"`
	Store             bool                 `json:"store"`
	Events            bool                 `json:"events"`
	Donations         bool                 `json:"donations"`
	Chat              bool                 `json:"chat"`
	SuggestedAmounts  string               `json:"suggestedAmounts"`
	Tiers             []store.DonationTier `json:"tiers"`
	Gating            string               `json:"gating"`
	GatingDescription string               `json:"gatingDescription"`
	Preview           GatingPreview        `json:"preview"`
}

// GatingPreview says what a signed-in non-subscriber meets with the app's
// gating: whether the gate holds them, and which landing sections and
// screens they still see.
type GatingPreview struct {
	Gated        bool     `json:"gated"`
	SeesPreviews bool     `json:"seesPreviews"`
	Screens      []string `json:"screens"`
	Description  string   `json:"description"`
}

func gatingPreview(st store.AppSettings) GatingPreview {
	gated := access.Gated(st, store.RoleFollower, false)
	p := GatingPreview{Gated: gated, SeesPreviews: access.ContentFor(st, store.RoleFollower, false) != access.ContentNone, Description: st.Features.SubscriptionGating.Settings.Description}
	if gated {
		// What the gate lets a non-subscriber open (gate.go's gateOpen).
		p.Screens = []string{"Home", "Cart", "Checkout"}
	} else {
		p.Screens = []string{"Everything members see"}
	}
	return p
}

// dollarsText writes cents as the form shows them: 5, 12.50.
func dollarsText(cents int64) string {
	if cents%100 == 0 {
		return strconv.FormatInt(cents/100, 10)
	}
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}

func (s *Server) studioFeatures(c echo.Context, sc *Scope) (*StudioFeatures, error) {
	st := sc.App.Settings
	f := st.Features
	tiers, err := s.store.DonationTiers(c.Request().Context(), sc.App.ID)
	if err != nil {
		return nil, err
	}
	amounts := []string{}
	for _, a := range f.Donations.Settings.SuggestedAmounts {
		amounts = append(amounts, dollarsText(a))
	}
	return &StudioFeatures{Community: f.Community.Enabled, AllowReactions: f.Community.Settings.AllowReactions,
		AllowComments: f.Community.Settings.AllowComments, Stories: !f.Community.Settings.StoriesOff, Store: f.Store.Enabled, Events: f.Events.Enabled,
		Donations: f.Donations.Enabled, Chat: f.Chat.Enabled, SuggestedAmounts: strings.Join(amounts, ", "), Tiers: tiers,
		Gating: store.GatingMode(st), GatingDescription: f.SubscriptionGating.Settings.Description, Preview: gatingPreview(st)}, nil
}

// GET /apps/:app/studio/features
func (s *Server) pageStudioFeatures(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	f, err := s.studioFeatures(c, sc)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionFeatures, Features: f}, http.StatusOK)
}

// featuresInput reads the Features form; a bad amount is a field error.
func featuresInput(c echo.Context) (store.FeaturesInput, *Error) {
	on := func(name string) bool { return c.FormValue(name) != "" }
	in := store.FeaturesInput{Community: on("community"), AllowReactions: on("allowReactions"), AllowComments: on("allowComments"), Stories: on("stories"),
		Store: on("store"), Events: on("events"), Donations: on("donations"), Chat: on("chat"),
		Gating: c.FormValue("gating"), GatingDescription: strings.TrimSpace(c.FormValue("gatingDescription")),
		SuggestedAmounts: []int64{}, Tiers: []store.TierInput{}}
	for _, a := range strings.FieldsFunc(c.FormValue("suggestedAmounts"), func(r rune) bool { return r == ',' || r == ' ' }) {
		cents, ok := parseDollars(a)
		if !ok {
			return in, fieldError("suggestedAmounts", "Suggested amounts are dollar amounts separated by commas, like 5, 10, 25")
		}
		in.SuggestedAmounts = append(in.SuggestedAmounts, cents)
	}
	var bad *Error
	names, amounts, descs := formValues(c, "tierName"), formValues(c, "tierAmount"), formValues(c, "tierDescription")
	for i, n := range names {
		amount, desc := "", ""
		if i < len(amounts) {
			amount = amounts[i]
		}
		if i < len(descs) {
			desc = descs[i]
		}
		if strings.TrimSpace(n) == "" && strings.TrimSpace(amount) == "" && strings.TrimSpace(desc) == "" {
			continue // an empty row: nothing to add
		}
		cents, ok := parseDollars(amount)
		if !ok && bad == nil {
			// Every row is kept, so the form comes back as it was typed.
			bad = fieldError("tiers", "Each tier needs an amount in dollars, like 25")
		}
		in.Tiers = append(in.Tiers, store.TierInput{Name: n, Amount: cents, Description: strings.TrimSpace(desc)})
	}
	return in, bad
}

// POST /apps/:app/studio/features
func (s *Server) formStudioFeatures(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	in, ferr := featuresInput(c)
	if ferr == nil {
		err = s.store.SaveFeatures(c.Request().Context(), sc.App.ID, sc.User.ID, in)
		if e := refusal(err, nil); e != nil {
			ferr = e
		} else if err != nil {
			return err
		}
	}
	if ferr != nil {
		f, lerr := s.studioFeatures(c, sc)
		if lerr != nil {
			return lerr
		}
		f.Stories = in.Stories
		f.Community, f.AllowReactions, f.AllowComments, f.Store, f.Events, f.Donations, f.Chat = in.Community, in.AllowReactions, in.AllowComments, in.Store, in.Events, in.Donations, in.Chat
		f.SuggestedAmounts, f.Gating, f.GatingDescription = c.FormValue("suggestedAmounts"), in.Gating, in.GatingDescription
		f.Tiers = []store.DonationTier{}
		for _, t := range in.Tiers {
			f.Tiers = append(f.Tiers, store.DonationTier{Name: t.Name, RequiredAmount: t.Amount, Description: t.Description})
		}
		return s.renderStudio(c, sc, StudioData{Section: sectionFeatures, Features: f, Form: "features", Error: ferr.Message, Fields: ferr.Fields}, ferr.Status)
	}
	return studioBack(c, sc, "/features", "saved")
}
