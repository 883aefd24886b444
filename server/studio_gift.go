package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// Complimentary memberships (issue 40 item 5): the creator gives a member a
// tier for some months or for good from the members screen, and ends a
// gift there; both are audited and the member is told (store/complimentary.go).

// MembershipGiven answers a gift: the membership as it now is.
type MembershipGiven struct {
	UserID string    `json:"userId"`
	TierID string    `json:"tierId"`
	Until  time.Time `json:"until"`
	// ForGood: given without an end.
	ForGood bool `json:"forGood"`
}

// giveMembership is the one path of the form and the JSON call: the
// creator alone gives, a tier of this app, to one of its members.
func (s *Server) giveMembership(c echo.Context, sc *Scope, userID, tierID string, months int) (*MembershipGiven, error) {
	if sc.Role != store.RoleCreator {
		return nil, forbidden("Only the creator can give a membership")
	}
	sub, err := s.store.GiveComplimentary(c.Request().Context(), store.Comp{AppID: sc.App.ID, ActorID: sc.User.ID, UserID: userID,
		PlanID: tierID, Months: months}, time.Now())
	if err != nil {
		return nil, answer(err, wording{store.ErrNotFound: "Member not found"})
	}
	return &MembershipGiven{UserID: userID, TierID: sub.PlanID, Until: sub.CurrentPeriodEnd, ForGood: months == 0}, nil
}

// POST /apps/:app/studio/members/:userId/gift with tierId and months (0:
// for good), or end=1 to end the member's gift.
func (s *Server) formStudioGift(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	back := membersBack(c)
	notice := "gift-given"
	if c.FormValue("end") != "" {
		err, notice = s.endGift(c, sc, c.Param("userId")), "gift-ended"
	} else {
		var months int
		if months, err = giftMonths(c.FormValue("months")); err == nil {
			_, err = s.giveMembership(c, sc, c.Param("userId"), c.FormValue("tierId"), months)
		}
	}
	if err != nil {
		return s.refuseMembersForm(c, sc, err, "gift:"+c.Param("userId"), nil)
	}
	return studioBack(c, sc, back, notice)
}

// giftMonths reads the months field: a whole number, 0 for good.
func giftMonths(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fieldError("months", "Choose how many months, or for good")
	}
	return n, nil
}

func (s *Server) endGift(c echo.Context, sc *Scope, userID string) error {
	if sc.Role != store.RoleCreator {
		return forbidden("Only the creator can end a gift")
	}
	err := s.store.EndComplimentary(c.Request().Context(), sc.App.ID, sc.User.ID, userID, time.Now())
	return answer(err, wording{store.ErrNotFound: "This member has no gift to end"})
}

// POST /api/studio/apps/:appId/members/:userId/gift {tierId, months}:
// months 0 gives the tier for good; giving again replaces the gift.
func (s *Server) apiStudioGift(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var req struct {
		TierID string `json:"tierId"`
		Months *int   `json:"months"`
	}
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	if req.Months == nil {
		return fieldError("months", "months is required (0 gives the tier for good)")
	}
	done, err := s.giveMembership(c, sc, c.Param("userId"), req.TierID, *req.Months)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, done)
}

// DELETE /api/studio/apps/:appId/members/:userId/gift ends the gift now.
func (s *Server) apiStudioEndGift(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	if err := s.endGift(c, sc, c.Param("userId")); err != nil {
		return err
	}
	return respondDone(c, "Gift ended")
}
