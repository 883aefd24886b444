package server

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// StudioMembers is the members screen: the filtered list, what the actor
// may grant, and the audit log.
type StudioMembers struct {
	Query      string               `json:"query"`
	Role       string               `json:"role"`
	Tier       string               `json:"tier"`
	Members    []store.StudioMember `json:"members"`
	Pagination store.Pagination     `json:"pagination"`
	Grantable  []string             `json:"grantable" tstype:"Role[]"`
	// Manageable lists the members whose role the actor may change.
	Manageable map[string]bool   `json:"manageable"`
	Audit      []store.AuditView `json:"audit"`
	// The wallet (studio_wallet.go): the welcome credit a new member gets
	// (as typed when a save was refused), whether the viewer may credit a
	// member (the creator), the hidden key that makes a credit form count
	// once however often it is sent, and a refused credit form as typed.
	WelcomeCredit     int64       `json:"welcomeCredit"`
	WelcomeCreditText string      `json:"welcomeCreditText,omitempty"`
	CanCredit         bool        `json:"canCredit"`
	CreditKey         string      `json:"creditKey"`
	Credit            *CreditForm `json:"credit,omitempty"`
	// Tiers are the app's tiers but drafts: the list's tier filter, and
	// what the creator may give a member (CanGift, studio_gift.go).
	Tiers   []store.Tier `json:"tiers"`
	CanGift bool         `json:"canGift"`
}

// CreditForm is a refused credit form as it was typed.
type CreditForm struct {
	UserID string `json:"userId"`
	Amount string `json:"amount"`
	Note   string `json:"note"`
}

// MemberRoleChanged answers a role change or removal.
type MemberRoleChanged struct {
	UserID string `json:"userId"`
	Role   string `json:"role"`
}

// memberFilter reads the members list's search, role filter and page
// (pageParams; 20 a page).
func memberFilter(c echo.Context) (store.MemberFilter, error) {
	page, _, err := pageParams(c, store.DefaultPageSize)
	if err != nil {
		return store.MemberFilter{}, err
	}
	role := strings.ToUpper(c.QueryParam("role"))
	if !store.IsMembershipRole(role) {
		role = ""
	}
	return store.MemberFilter{Query: c.QueryParam("q"), Role: role, Tier: c.QueryParam("tier"), Page: page, Limit: store.DefaultPageSize}, nil
}

// studioMembers is the one loader of the screen and the JSON call.
func (s *Server) studioMembers(c echo.Context, sc *Scope, f store.MemberFilter) (*StudioMembers, error) {
	ctx := c.Request().Context()
	list, p, err := s.store.StudioMembers(ctx, sc.App.ID, f)
	if err != nil {
		return nil, err
	}
	audit, err := s.store.AuditLog(ctx, sc.App.ID, 50)
	if err != nil {
		return nil, err
	}
	m := &StudioMembers{Query: f.Query, Role: f.Role, Tier: f.Tier, Members: list, Pagination: p, Grantable: access.GrantableRoles(sc.Role),
		Manageable: map[string]bool{}, Audit: audit, WelcomeCredit: sc.App.Settings.Wallet.WelcomeCredit,
		CanCredit: sc.Role == store.RoleCreator && s.cfg.WalletEnabled, CreditKey: store.NewID(), CanGift: sc.Role == store.RoleCreator}
	if m.Tiers, err = s.store.GiftableTiers(ctx, sc.App.ID); err != nil {
		return nil, err
	}
	for _, x := range list {
		if x.UserID != sc.User.ID && access.CanChangeRole(sc.Role, x.Role, "NONE") {
			m.Manageable[x.UserID] = true
		}
	}
	return m, nil
}

// GET /apps/:app/studio/members
func (s *Server) pageStudioMembers(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	f, err := memberFilter(c)
	if err != nil {
		return err
	}
	m, err := s.studioMembers(c, sc, f)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionMembers, Members: m}, http.StatusOK)
}

// GET /api/studio/apps/:appId/members?q=&role=&page=
func (s *Server) apiStudioMembers(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	f, err := memberFilter(c)
	if err != nil {
		return err
	}
	m, err := s.studioMembers(c, sc, f)
	if err != nil {
		return err
	}
	return respondPage(c, m, m.Pagination)
}

// changeRole is the one path of the form and the JSON calls: the actor may
// change the member's current role to next (access.CanChangeRole), and the
// write is conditional on that current role.
func (s *Server) changeRole(c echo.Context, sc *Scope, userID, next string) error {
	ctx := c.Request().Context()
	if userID == sc.User.ID {
		return forbidden("You cannot change your own role")
	}
	m, err := s.store.MembershipOf(ctx, sc.App.ID, userID)
	if err != nil {
		return err
	}
	if m == nil {
		return notFound("Member not found")
	}
	if m.Role == next {
		return nil // nothing changes, nothing to log (the role select's current role)
	}
	if !access.CanChangeRole(sc.Role, m.Role, next) {
		return forbidden(msgCannotGrant)
	}
	if next == "NONE" {
		// A removed member's membership ends with them: a card provider
		// that renews it hears first, so it never charges again.
		if err := s.stopProviderRenewal(c, sc.App.ID, userID); err != nil {
			return err
		}
	}
	err = s.store.ChangeMemberRole(ctx, sc.App.ID, sc.User.ID, userID, m.Role, next)
	if errors.Is(err, store.ErrRoleChanged) {
		return errorf(http.StatusConflict, msgRoleChanged)
	}
	return answer(err, nil)
}

// POST /apps/:app/studio/members/:userId with role (NONE removes).
func (s *Server) formStudioMember(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	next := strings.ToUpper(c.FormValue("role"))
	back := membersBack(c)
	if err := s.changeRole(c, sc, c.Param("userId"), next); err != nil {
		if e := refusal(err, nil); e != nil {
			// The form's own URL has no page: the list is sent back at page 1.
			f, _ := memberFilter(c)
			if u, perr := url.ParseQuery(strings.TrimPrefix(c.FormValue("back"), "?")); perr == nil {
				f.Query, f.Role = u.Get("q"), strings.ToUpper(u.Get("role"))
			}
			m, lerr := s.studioMembers(c, sc, f)
			if lerr != nil {
				return lerr
			}
			return s.renderStudio(c, sc, StudioData{Section: sectionMembers, Members: m, Form: "member", Error: e.Message}, e.Status)
		}
		return err
	}
	notice := "role"
	if next == "NONE" {
		notice = "removed"
	}
	return studioBack(c, sc, back, notice)
}

// PUT /api/studio/apps/:appId/members/:userId {role}
func (s *Server) apiStudioSetRole(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var req struct {
		Role string `json:"role"`
	}
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	next := strings.ToUpper(req.Role)
	if next == "NONE" || !store.IsMembershipRole(next) {
		return fieldError("role", "Unknown role")
	}
	if err := s.changeRole(c, sc, c.Param("userId"), next); err != nil {
		return err
	}
	return respond(c, http.StatusOK, MemberRoleChanged{UserID: c.Param("userId"), Role: next})
}

// DELETE /api/studio/apps/:appId/members/:userId
func (s *Server) apiStudioRemoveMember(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	if err := s.changeRole(c, sc, c.Param("userId"), "NONE"); err != nil {
		return err
	}
	return respondDone(c, "Member removed")
}

// refuseMembersForm shows the members screen again after a refused form
// (credit, gift) without JavaScript: the refusal's message and fields, the
// form named, and what keep puts back as it was typed. An error that is
// not a refusal passes on.
func (s *Server) refuseMembersForm(c echo.Context, sc *Scope, err error, form string, keep func(*StudioMembers)) error {
	e := refusal(err, nil)
	if e == nil {
		return err
	}
	f, _ := memberFilter(c)
	m, lerr := s.studioMembers(c, sc, f)
	if lerr != nil {
		return lerr
	}
	if keep != nil {
		keep(m)
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionMembers, Members: m, Form: form, Error: e.Message, Fields: e.Fields}, e.Status)
}

// membersBack is where a members-screen form returns: the list with the
// search, filters and page it was sent from (its back field, a query).
func membersBack(c echo.Context) string {
	if q := c.FormValue("back"); strings.HasPrefix(q, "?") {
		return "/members" + q
	}
	return "/members"
}
