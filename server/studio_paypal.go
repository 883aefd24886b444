package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// sectionPayPal is the studio's PayPal screen (issue 24): where the app's
// PayPal orders are paid, and the platform fees owed for them.
const sectionPayPal = "paypal"

// StudioPayPal is the PayPal screen: the payee form and what is owed.
type StudioPayPal struct {
	// Enabled: PayPal is configured on this deployment.
	Enabled    bool   `json:"enabled"`
	MerchantID string `json:"merchantId"`
	Email      string `json:"email"`
	// FeePercent and FeesAllowed: the app's platform fee and whether
	// PayPal takes it at payment (PAYPAL_PLATFORM_FEES); otherwise it is
	// owed, listed in Owed.
	FeePercent float64 `json:"feePercent"`
	// CanManage: the viewer is the creator, who alone sets the payee.
	CanManage   bool                    `json:"canManage"`
	FeesAllowed bool                    `json:"feesAllowed"`
	Owed        []store.PlatformFeeOwed `json:"owed"`
	OwedTotal   int64                   `json:"owedTotal"`
}

func (s *Server) studioPayPal(c echo.Context, sc *Scope) (*StudioPayPal, error) {
	ctx := c.Request().Context()
	p := &StudioPayPal{Enabled: s.cfg.PayPal.Enabled(), FeesAllowed: s.cfg.PayPal.PlatformFees, CanManage: sc.Role == store.RoleCreator}
	bp, err := s.store.AppFeeBP(ctx, sc.App.ID)
	if err != nil {
		return nil, err
	}
	p.FeePercent = float64(bp) / 100
	payee, err := s.store.PayPalPayeeOf(ctx, sc.App.ID)
	if err != nil {
		return nil, err
	}
	if payee != nil {
		p.MerchantID, p.Email = payee.MerchantID, payee.Email
	}
	if p.Owed, p.OwedTotal, err = s.store.FeesOwed(ctx, sc.App.ID, 50); err != nil {
		return nil, err
	}
	return p, nil
}

// GET /apps/:app/studio/paypal
func (s *Server) pageStudioPayPal(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	p, err := s.studioPayPal(c, sc)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionPayPal, PayPal: p}, http.StatusOK)
}

// POST /apps/:app/studio/paypal (merchantId, email, password): sets where
// the app's PayPal orders are paid; both empty pays the operator's account
// again. Like every payout setting it is the creator's alone, with their
// password; the change is audit-logged and mailed to the creator.
func (s *Server) formStudioPayPal(c echo.Context) error {
	sc, err := s.payoutsScope(c)
	if err != nil {
		return err
	}
	e, err := payoutPassword(c, sc)
	if err != nil {
		return err
	}
	if e == nil {
		_, err = s.store.SetPayPalPayee(c.Request().Context(), sc.App.ID, sc.User.ID, c.FormValue("merchantId"), c.FormValue("email"))
		e = refusal(err, nil)
	}
	if e != nil {
		p, lerr := s.studioPayPal(c, sc)
		if lerr != nil {
			return lerr
		}
		p.MerchantID, p.Email = c.FormValue("merchantId"), c.FormValue("email")
		return s.renderStudio(c, sc, StudioData{Section: sectionPayPal, PayPal: p, Form: "paypal", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/paypal", "saved")
}
