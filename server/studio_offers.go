package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// The studio's offers editor (issue 40 items 5 and 6): the app's codes
// with how many redeemed each and who, a form for a new code (a percentage
// or an amount off, once, for the first N months or for ever, an expiry, a
// limit, one tier or any) and Deactivate; plain forms that work without
// JavaScript. The creator and admins manage codes, as they manage tiers.
const sectionOffers = "offers"

// StudioOffers is the offers screen: the codes, the tiers a code may be
// limited to, and a refused form as typed.
type StudioOffers struct {
	Offers []store.StudioOffer `json:"offers"`
	Tiers  []store.Tier        `json:"tiers"`
	Edit   *OfferForm          `json:"edit,omitempty"`
}

// OfferForm is the new-code form as typed.
type OfferForm struct {
	Code           string `json:"code"`
	Kind           string `json:"kind" tstype:"'percent' | 'amount'"`
	Value          string `json:"value"`
	Duration       string `json:"duration"`
	DurationMonths string `json:"durationMonths"`
	ExpiresOn      string `json:"expiresOn"`
	MaxRedemptions string `json:"maxRedemptions"`
	TierID         string `json:"tierId"`
}

func (s *Server) studioOffers(c echo.Context, sc *Scope) (*StudioOffers, error) {
	ctx := c.Request().Context()
	offers, err := s.store.StudioOffers(ctx, sc.App.ID, time.Now())
	if err != nil {
		return nil, err
	}
	tiers, err := s.store.GiftableTiers(ctx, sc.App.ID)
	if err != nil {
		return nil, err
	}
	return &StudioOffers{Offers: offers, Tiers: tiers}, nil
}

// GET /apps/:app/studio/offers
func (s *Server) pageStudioOffers(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	o, err := s.studioOffers(c, sc)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionOffers, Offers: o}, http.StatusOK)
}

// offerForm reads the form: kind percent (value a whole percentage) or
// amount (value in dollars); expiresOn a date (the code works through that
// day, UTC); blank limit is none.
func offerForm(c echo.Context) (OfferForm, store.OfferInput, error) {
	f := OfferForm{Code: c.FormValue("code"), Kind: c.FormValue("kind"), Value: c.FormValue("value"),
		Duration: strings.ToUpper(strings.TrimSpace(c.FormValue("duration"))), DurationMonths: c.FormValue("durationMonths"),
		ExpiresOn: strings.TrimSpace(c.FormValue("expiresOn")), MaxRedemptions: c.FormValue("maxRedemptions"), TierID: c.FormValue("tierId")}
	in := store.OfferInput{Code: f.Code, Duration: f.Duration}
	switch f.Kind {
	case "amount":
		cents, err := formCents(f.Value, "Enter dollars, like 5 or 4.50")
		if err != nil || cents == nil {
			return f, in, fieldError("value", "Enter dollars off, like 5 or 4.50")
		}
		in.AmountOff = *cents
	default:
		f.Kind = "percent"
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(f.Value), "%"), 10, 64)
		if err != nil {
			return f, in, fieldError("value", "Enter a whole percentage, like 50")
		}
		in.PercentOff = n
	}
	if in.Duration == store.OfferRepeating {
		n, err := strconv.ParseInt(strings.TrimSpace(f.DurationMonths), 10, 64)
		if err != nil {
			return f, in, fieldError("durationMonths", "How many months, like 1 or 3")
		}
		in.DurationMonths = n
	}
	if f.ExpiresOn != "" {
		d, err := time.Parse("2006-01-02", f.ExpiresOn)
		if err != nil {
			return f, in, fieldError("expiresOn", "Choose a date")
		}
		end := d.AddDate(0, 0, 1).UTC()
		in.ExpiresAt = &end
	}
	if v := strings.TrimSpace(f.MaxRedemptions); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return f, in, fieldError("maxRedemptions", "A whole number, or blank for no limit")
		}
		in.MaxRedemptions = n
	}
	if f.TierID != "" {
		in.TierID = &f.TierID
	}
	return f, in, nil
}

// POST /apps/:app/studio/offers: a new code.
func (s *Server) formStudioOffer(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	f, in, err := offerForm(c)
	if err == nil {
		_, err = s.store.CreateOffer(c.Request().Context(), sc.App.ID, sc.User.ID, in, time.Now())
	}
	if e := refusal(err, nil); e != nil {
		o, lerr := s.studioOffers(c, sc)
		if lerr != nil {
			return lerr
		}
		o.Edit = &f
		return s.renderStudio(c, sc, StudioData{Section: sectionOffers, Offers: o, Form: "offer", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/offers", "offer-created")
}

// POST /apps/:app/studio/offers/:offerId/active (active=0 deactivates, 1
// turns the code on again).
func (s *Server) formStudioOfferActive(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	active := c.FormValue("active") == "1"
	if err := s.store.SetOfferActive(c.Request().Context(), sc.App.ID, sc.User.ID, c.Param("offerId"), active); err != nil && !isNotFound(err) {
		return err
	}
	notice := "offer-deactivated"
	if active {
		notice = "offer-activated"
	}
	return studioBack(c, sc, "/offers", notice)
}

// GET /api/studio/apps/:appId/offers: the codes with their redemptions.
func (s *Server) apiStudioOffers(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	offers, err := s.store.StudioOffers(c.Request().Context(), sc.App.ID, time.Now())
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, offers)
}

// POST /api/studio/apps/:appId/offers {code, percentOff | amountOff,
// duration, durationMonths, expiresAt, maxRedemptions, tierId}: 201.
func (s *Server) apiStudioCreateOffer(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var in store.OfferInput
	if err := c.Bind(&in); err != nil {
		return badRequest("Invalid request body")
	}
	o, err := s.store.CreateOffer(c.Request().Context(), sc.App.ID, sc.User.ID, in, time.Now())
	if err != nil {
		return answer(err, nil)
	}
	return respond(c, http.StatusCreated, o)
}

// DELETE /api/studio/apps/:appId/offers/:offerId deactivates the code
// (its redemptions stay; a member can no longer use it).
func (s *Server) apiStudioDeactivateOffer(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	if err := s.store.SetOfferActive(c.Request().Context(), sc.App.ID, sc.User.ID, c.Param("offerId"), false); err != nil {
		return wrapLoad(err, "Offer not found")
	}
	return respondDone(c, "Offer deactivated")
}
