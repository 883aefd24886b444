package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// StudioPlanForm is a plan form as it was typed, shown again with its
// errors (ItemID empty for a new plan).
type StudioPlanForm struct {
	ItemID      string `json:"itemId"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Benefits    string `json:"benefits"`
	Price       string `json:"price"`
	Cycle       string `json:"cycle"`
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

// POST /apps/:app/studio/plans (new) and /apps/:app/studio/plans/:itemId
// (edit, or give a draft its billing cycle).
func (s *Server) formStudioPlan(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	form := StudioPlanForm{ItemID: c.Param("itemId"), Name: c.FormValue("name"), Description: c.FormValue("description"),
		Benefits: c.FormValue("benefits"), Price: c.FormValue("price"), Cycle: c.FormValue("billingCycle")}
	fail := func(e *Error) error {
		return s.renderStudioPlans(c, sc, StudioData{PlanEdit: &form, Form: "plan", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	price, ok := parseDollars(form.Price)
	if !ok {
		return fail(fieldError("price", "Enter a price in dollars, like 5 or 4.99"))
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
		Description: strings.TrimSpace(form.Description), Benefits: benefits, Price: price, Cycle: strings.ToUpper(form.Cycle)})
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
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	err = s.store.ArchivePlan(c.Request().Context(), sc.App.ID, sc.User.ID, c.Param("itemId"))
	if e := refusal(err, wording{store.ErrNotFound: "Plan not found"}); e != nil {
		return s.renderStudioPlans(c, sc, StudioData{Form: "archive", Error: e.Message}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/plans", "archived")
}
