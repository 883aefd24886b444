package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// The studio's tiers editor (issue 40 item 1): the app's membership tiers
// in rank order, each with its monthly and yearly price, benefits, free
// trial days and state, moved up and down with plain forms.

// StudioPlanForm is a tier form as it was typed, shown again with its
// errors (ItemID empty for a new tier).
type StudioPlanForm struct {
	ItemID       string `json:"itemId"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Benefits     string `json:"benefits"`
	MonthlyPrice string `json:"monthlyPrice"`
	YearlyPrice  string `json:"yearlyPrice"`
	TrialDays    string `json:"trialDays"`
	// TrialCardRequired: the trial starts only with a card.
	TrialCardRequired bool   `json:"trialCardRequired"`
	State             string `json:"state"`
}

func (s *Server) renderStudioPlans(c echo.Context, sc *Scope, d StudioData, status int) error {
	plans, err := s.store.StudioPlans(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	d.Section, d.Plans = sectionPlans, plans
	return s.renderStudio(c, sc, d, status)
}

// GET /apps/:app/studio/plans
func (s *Server) pageStudioPlans(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	return s.renderStudioPlans(c, sc, StudioData{}, http.StatusOK)
}

// optionalDollars reads an optional price field: blank is no price.
func optionalDollars(v string) (*int64, bool) {
	if strings.TrimSpace(v) == "" {
		return nil, true
	}
	n, ok := parseDollars(v)
	if !ok {
		return nil, false
	}
	return &n, true
}

// POST /apps/:app/studio/plans (new) and /apps/:app/studio/plans/:itemId
// (edit, or give a draft its prices). The older form's price and
// billingCycle fields still work: they set that cycle's price.
func (s *Server) formStudioPlan(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	form := StudioPlanForm{ItemID: c.Param("itemId"), Name: c.FormValue("name"), Description: c.FormValue("description"),
		Benefits: c.FormValue("benefits"), MonthlyPrice: c.FormValue("monthlyPrice"), YearlyPrice: c.FormValue("yearlyPrice"),
		TrialDays: c.FormValue("trialDays"), TrialCardRequired: c.FormValue("trialCardRequired") != "", State: strings.ToUpper(strings.TrimSpace(c.FormValue("state")))}
	if strings.TrimSpace(form.MonthlyPrice+form.YearlyPrice) == "" && strings.TrimSpace(c.FormValue("price")) != "" {
		switch strings.ToUpper(c.FormValue("billingCycle")) {
		case store.CycleMonthly:
			form.MonthlyPrice = c.FormValue("price")
		case store.CycleYearly:
			form.YearlyPrice = c.FormValue("price")
		}
	}
	fail := func(e *Error) error {
		return s.renderStudioPlans(c, sc, StudioData{PlanEdit: &form, Form: "plan", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	monthly, ok := optionalDollars(form.MonthlyPrice)
	if !ok {
		return fail(fieldError("monthlyPrice", "Enter a price in dollars, like 5 or 4.99"))
	}
	yearly, ok := optionalDollars(form.YearlyPrice)
	if !ok {
		return fail(fieldError("yearlyPrice", "Enter a price in dollars, like 50 or 49.99"))
	}
	trial := 0
	if t := strings.TrimSpace(form.TrialDays); t != "" {
		if trial, err = strconv.Atoi(t); err != nil {
			return fail(fieldError("trialDays", "Enter the free trial in whole days, like 7"))
		}
	}
	if sc.App.Store == nil {
		return notFound("This app has no store")
	}
	shop, err := s.store.ShopByID(c.Request().Context(), sc.App.Store.ID)
	if err != nil {
		return err
	}
	benefits := strings.Split(strings.ReplaceAll(form.Benefits, "\r\n", "\n"), "\n")
	_, err = s.store.SavePlan(c.Request().Context(), shop, sc.User.ID, form.ItemID, store.PlanInput{Name: form.Name,
		Description: strings.TrimSpace(form.Description), Benefits: benefits, MonthlyPrice: monthly, YearlyPrice: yearly,
		TrialDays: trial, TrialCardRequired: form.TrialCardRequired, State: form.State})
	if e := refusal(err, wording{store.ErrNotFound: "Plan not found"}); e != nil {
		return fail(e)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/plans", "saved")
}

// POST /apps/:app/studio/plans/:itemId/archive
func (s *Server) formStudioPlanArchive(c echo.Context) error {
	return s.tierAction(c, func(sc *Scope) error {
		return s.store.ArchivePlan(c.Request().Context(), sc.App.ID, sc.User.ID, c.Param("itemId"))
	}, "archived")
}

// POST /apps/:app/studio/plans/:itemId/state (state=DRAFT|ON_SALE|ARCHIVED)
func (s *Server) formStudioPlanState(c echo.Context) error {
	return s.tierAction(c, func(sc *Scope) error {
		return s.store.SetTierState(c.Request().Context(), sc.App.ID, sc.User.ID, c.Param("itemId"), strings.ToUpper(c.FormValue("state")))
	}, "saved")
}

// POST /apps/:app/studio/plans/:itemId/move (direction=up|down)
func (s *Server) formStudioPlanMove(c echo.Context) error {
	return s.tierAction(c, func(sc *Scope) error {
		return s.store.MoveTier(c.Request().Context(), sc.App.ID, sc.User.ID, c.Param("itemId"), c.FormValue("direction") == "up")
	}, "moved")
}

func (s *Server) tierAction(c echo.Context, do func(sc *Scope) error, notice string) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	err = do(sc)
	if e := refusal(err, wording{store.ErrNotFound: "Plan not found"}); e != nil {
		return s.renderStudioPlans(c, sc, StudioData{Form: "archive", Error: e.Message}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/plans", notice)
}
