package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// sectionShipping is the studio's shipping screen (issue 43 item 4): the
// app's shipping zones, each a set of countries with a flat rate per
// order, a rate per extra item and a threshold over which shipping is
// free. With no zones shipping is free everywhere; with some, checkout
// offers only their countries and charges the zone's rate.
const sectionShipping = "shipping"

// StudioShipping is the shipping screen: the zones and the form being
// edited (a new zone, or a refused one as typed).
type StudioShipping struct {
	Zones     []store.ShippingZone `json:"zones"`
	Countries []store.Country      `json:"countries"`
	// Edit is the refused form as typed (ID "" for a new zone).
	Edit *ShippingZoneForm `json:"edit,omitempty"`
}

// ShippingZoneForm is a zone form as typed: amounts as the dollars entered.
type ShippingZoneForm struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Countries []string `json:"countries"`
	FlatRate  string   `json:"flatRate"`
	PerItem   string   `json:"perItem"`
	FreeOver  string   `json:"freeOver"`
}

func (s *Server) studioShipping(c echo.Context, sc *Scope) (*StudioShipping, error) {
	zones, err := s.store.ShippingZones(c.Request().Context(), sc.App.ID)
	if err != nil {
		return nil, err
	}
	return &StudioShipping{Zones: zones, Countries: store.Countries}, nil
}

// GET /apps/:app/studio/shipping
func (s *Server) pageStudioShipping(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	sh, err := s.studioShipping(c, sc)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionShipping, Shipping: sh}, http.StatusOK)
}

// zoneForm reads the zone form (name, countries repeated, flatRate,
// perItem, freeOver in dollars; blank is 0).
func zoneForm(c echo.Context) (ShippingZoneForm, store.ShippingZoneInput, error) {
	f := ShippingZoneForm{ID: c.Param("zoneId"), Name: c.FormValue("name"), Countries: formValues(c, "countries"),
		FlatRate: c.FormValue("flatRate"), PerItem: c.FormValue("perItem"), FreeOver: c.FormValue("freeOver")}
	in := store.ShippingZoneInput{Name: f.Name, Countries: f.Countries}
	for _, a := range []struct {
		v     string
		into  *int64
		field string
	}{{f.FlatRate, &in.FlatRate, "flatRate"}, {f.PerItem, &in.PerItem, "perItem"}, {f.FreeOver, &in.FreeOver, "freeOver"}} {
		cents, err := formCents(a.v, "Enter dollars, like 5 or 4.50")
		if err != nil {
			return f, in, fieldError(a.field, "Enter dollars, like 5 or 4.50")
		}
		if cents != nil {
			*a.into = *cents
		}
	}
	return f, in, nil
}

// POST /apps/:app/studio/shipping (a new zone) and
// /apps/:app/studio/shipping/:zoneId (that zone, replaced).
func (s *Server) formStudioShippingZone(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	f, in, err := zoneForm(c)
	if err == nil {
		_, err = s.store.SaveShippingZone(c.Request().Context(), sc.App.ID, sc.User.ID, f.ID, in)
	}
	if e := refusal(err, wording{store.ErrNotFound: "This zone was deleted meanwhile"}); e != nil {
		sh, lerr := s.studioShipping(c, sc)
		if lerr != nil {
			return lerr
		}
		sh.Edit = &f
		return s.renderStudio(c, sc, StudioData{Section: sectionShipping, Shipping: sh, Form: "zone", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/shipping", "zone-saved")
}

// POST /apps/:app/studio/shipping/:zoneId/delete
func (s *Server) formStudioShippingDelete(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	err = s.store.DeleteShippingZone(c.Request().Context(), sc.App.ID, sc.User.ID, c.Param("zoneId"))
	if err != nil && !isNotFound(err) {
		return err
	}
	return studioBack(c, sc, "/shipping", "zone-deleted")
}

// GET /api/studio/apps/:appId/shipping-zones
func (s *Server) apiStudioShippingZones(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	zones, err := s.store.ShippingZones(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, zones)
}

// POST /api/studio/apps/:appId/shipping-zones and PUT .../:zoneId
// {name, countries, flatRate, perItem, freeOver} (cents): 201 or 200 with
// the zone.
func (s *Server) apiStudioSaveShippingZone(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var in store.ShippingZoneInput
	if err := c.Bind(&in); err != nil {
		return badRequest("Invalid request body")
	}
	z, err := s.store.SaveShippingZone(c.Request().Context(), sc.App.ID, sc.User.ID, strings.TrimSpace(c.Param("zoneId")), in)
	if err != nil {
		return wrapLoad(err, "Shipping zone not found")
	}
	status := http.StatusOK
	if c.Param("zoneId") == "" {
		status = http.StatusCreated
	}
	return respond(c, status, z)
}

// DELETE /api/studio/apps/:appId/shipping-zones/:zoneId
func (s *Server) apiStudioDeleteShippingZone(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteShippingZone(c.Request().Context(), sc.App.ID, sc.User.ID, c.Param("zoneId")); err != nil {
		return wrapLoad(err, "Shipping zone not found")
	}
	return c.NoContent(http.StatusNoContent)
}
