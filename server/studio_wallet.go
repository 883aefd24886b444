package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// Issue 43 item 3: the welcome credit is a studio setting, and a creator
// credits a member's wallet from the members screen (no CLI).

// WalletCredited answers a credit: the member's balance after it, and
// whether this key had already credited them (nothing was added again).
type WalletCredited struct {
	UserID   string `json:"userId"`
	Amount   int64  `json:"amount"`
	Balance  int64  `json:"balance"`
	Replayed bool   `json:"replayed"`
}

// creditMember is the one path of the form and the JSON call: the creator
// alone gives money, to a member of this app, once per key.
func (s *Server) creditMember(c echo.Context, sc *Scope, userID string, amount int64, note, key string) (*WalletCredited, error) {
	if sc.Role != store.RoleCreator {
		return nil, forbidden("Only the creator can credit a member's wallet")
	}
	if !s.cfg.WalletEnabled {
		return nil, errorf(http.StatusConflict, "The wallet is off on this site")
	}
	ctx := c.Request().Context()
	m, err := s.store.MembershipOf(ctx, sc.App.ID, userID)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, notFound("Member not found")
	}
	bal, replayed, err := s.store.CreditMemberWallet(ctx, store.StudioCredit{AppID: sc.App.ID, ActorID: sc.User.ID, UserID: userID,
		Amount: amount, Note: note, Key: key})
	if err != nil {
		return nil, err
	}
	return &WalletCredited{UserID: userID, Amount: amount, Balance: bal, Replayed: replayed}, nil
}

// POST /apps/:app/studio/members/:userId/credit with amount (dollars),
// note and key (the form's hidden idempotency key).
func (s *Server) formStudioCredit(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	back := membersBack(c)
	var done *WalletCredited
	cents, err := formCents(c.FormValue("amount"), "Enter an amount in dollars, like 5 or 12.50")
	if err == nil {
		var amount int64
		if cents != nil {
			amount = *cents
		}
		done, err = s.creditMember(c, sc, c.Param("userId"), amount, c.FormValue("note"), c.FormValue("key"))
	}
	if err != nil {
		return s.refuseMembersForm(c, sc, err, "credit", func(m *StudioMembers) {
			m.Credit = &CreditForm{UserID: c.Param("userId"), Amount: c.FormValue("amount"), Note: c.FormValue("note")}
		})
	}
	notice := "credited"
	if done.Replayed {
		notice = "credit-replayed"
	}
	return studioBack(c, sc, back, notice)
}

// POST /api/studio/apps/:appId/members/:userId/credit {amount, note,
// idempotencyKey} (or the Idempotency-Key header): 201 when credited, 200
// when the key had already credited this member.
func (s *Server) apiStudioCredit(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var req struct {
		Amount         int64  `json:"amount"`
		Note           string `json:"note"`
		IdempotencyKey string `json:"idempotencyKey"`
	}
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	key := req.IdempotencyKey
	if key == "" {
		key = c.Request().Header.Get("Idempotency-Key")
	}
	if key == "" {
		return fieldError("idempotencyKey", "An idempotency key is required")
	}
	done, err := s.creditMember(c, sc, c.Param("userId"), req.Amount, req.Note, key)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if done.Replayed {
		status = http.StatusOK
	}
	return respond(c, status, done)
}

// POST /apps/:app/studio/wallet with welcomeCredit (dollars, blank or 0
// for none): what a new member finds in their wallet.
func (s *Server) formStudioWelcomeCredit(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	cents, err := formCents(c.FormValue("welcomeCredit"), "Enter the welcome credit in dollars, like 5 or 0")
	if err == nil {
		var amount int64
		if cents != nil {
			amount = *cents
		}
		err = s.store.SaveWelcomeCredit(c.Request().Context(), sc.App.ID, sc.User.ID, amount)
	}
	if e := refusal(err, nil); e != nil {
		f, _ := memberFilter(c)
		m, lerr := s.studioMembers(c, sc, f)
		if lerr != nil {
			return lerr
		}
		m.WelcomeCreditText = c.FormValue("welcomeCredit")
		return s.renderStudio(c, sc, StudioData{Section: sectionMembers, Members: m, Form: "wallet", Error: e.Message,
			Fields: map[string]string{"welcomeCredit": e.Message}}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/members", "welcome-saved")
}
