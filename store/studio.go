package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// The creator studio's writes: app creation from the browser, suspension,
// the profile and features settings, donation tiers, plans and member roles.
// Every one of them writes a row of the app's audit log in its transaction.

// AppSuspended is the status an operator gives an app to take it offline;
// a suspended app answers like a missing one to everyone.
const AppSuspended = "SUSPENDED"

// ErrAppNameTaken: another app has the name.
var ErrAppNameTaken = errors.New("app name taken")

// ErrRoleChanged: the member's role is no longer the one the change was
// decided on (another change got there first).
var ErrRoleChanged = errors.New("member role changed meanwhile")

// AuditView is an audit line as the studio shows it: who, what, when.
type AuditView struct {
	ID        string    `json:"id"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	Detail    string    `json:"detail"`
	CreatedAt time.Time `json:"createdAt"`
}

// writeAudit writes a studio change (a role, a removal, settings, plans,
// suspension) to the app's one audit log, the moderation log: a change about
// a member names them as its target; detail is its reason column.
func writeAudit(ctx context.Context, db bun.IDB, appID, actorID, action, targetID, detail string) error {
	e := ModerationEntry{AppID: appID, ActorID: actorID, Action: action, TargetID: targetID, Reason: detail}
	if targetID != "" {
		e.TargetType, e.TargetUserID = TargetMember, targetID
	}
	return logAction(ctx, db, e)
}

// AuditLog lists the app's latest audit lines (the one log: studio and
// moderation actions), newest first, as the studio's JSON shows them.
func (s *Storage) AuditLog(ctx context.Context, appID string, limit int) ([]AuditView, error) {
	out := []AuditView{}
	err := s.db.NewSelect().TableExpr("moderation_log AS a").
		Join("LEFT JOIN users AS u ON u.id = a.actor_id").Join("LEFT JOIN users AS t ON t.id = a.target_user_id").
		ColumnExpr("a.id, COALESCE(u.username, '') AS actor, a.action, COALESCE(t.username, a.target_user_id) AS target, a.reason AS detail, a.created_at").
		Where("a.app_id = ?", appID).OrderExpr("a.created_at DESC, a.id DESC").Limit(int64(limit)).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("load audit log: %w", err)
	}
	return out, nil
}

// NewApp is an app a user creates for themselves.
type NewApp struct {
	Name, DisplayName, CreatorID string
	// MaxPerDay refuses the creation (ErrTooManyApps) when the creator
	// already created this many apps in the last 24 hours; 0 is no limit
	// (the operator's CLI).
	MaxPerDay int
	// Published opens the app to everyone at once; a creator's new app
	// starts unpublished, for its staff only, until they publish it from
	// the launch checklist (app_launch.go). The operator's CLI may say
	// --published.
	Published bool
}

// ErrTooManyApps: the account created its most apps for the day.
var ErrTooManyApps = errors.New("too many apps created today")

// CheckDisplayName: 1 to 60 characters on one line (it is the sender's
// name of every mail of the app).
func CheckDisplayName(name string) error {
	n := utf8.RuneCountInString(strings.TrimSpace(name))
	if n < 1 || n > 60 {
		return &ErrInvalid{Msg: "Display name must be 1 to 60 characters", Field: "displayName"}
	}
	return CheckOneLine("displayName", "Display name", name)
}

// AppNameAvailable answers nil when name follows the app name rules
// (CheckAppName, the CLI's) and no app has it; an *ErrInvalid or
// ErrAppNameTaken otherwise.
func (s *Storage) AppNameAvailable(ctx context.Context, name string) error {
	if err := CheckAppName(name); err != nil {
		return &ErrInvalid{Msg: err.Error(), Field: "name"}
	}
	n, err := s.db.NewSelect().Model((*App)(nil)).Where("name = ?", name).Count(ctx)
	if err != nil {
		return fmt.Errorf("check app name: %w", err)
	}
	if n > 0 {
		return ErrAppNameTaken
	}
	return nil
}

// CreateAppWith is CreateApp with the display name the creator chose. Of
// concurrent creations of one name the unique name decides: one app, the
// others ErrAppNameTaken.
func (s *Storage) CreateAppWith(ctx context.Context, in NewApp) (*App, error) {
	if err := CheckAppName(in.Name); err != nil {
		return nil, &ErrInvalid{Msg: err.Error(), Field: "name"}
	}
	display := strings.TrimSpace(in.DisplayName)
	if display == "" {
		display = in.Name
	}
	if err := CheckDisplayName(display); err != nil {
		return nil, err
	}
	app := &App{ID: NewID(), Name: in.Name, Status: "PUBLIC", Version: "1.0.0", CreatorID: in.CreatorID,
		Settings: DefaultSettings(display), Unpublished: !in.Published}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if in.MaxPerDay > 0 {
			// One account's creations are serialised on its user row, so
			// 50 at once create at most MaxPerDay.
			if tx.Dialect().Name() == dialect.PG {
				if _, err := tx.NewRaw("SELECT id FROM users WHERE id = ? FOR UPDATE", in.CreatorID).Exec(ctx); err != nil {
					return fmt.Errorf("lock creator: %w", err)
				}
			}
			n, err := tx.NewSelect().Model((*App)(nil)).Where("creator_id = ? AND created_at > ?", in.CreatorID,
				time.Now().UTC().Add(-24*time.Hour)).Count(ctx)
			if err != nil {
				return fmt.Errorf("count apps created today: %w", err)
			}
			if int(n) >= in.MaxPerDay {
				return ErrTooManyApps
			}
		}
		if _, err := tx.NewInsert().Model(app).Exec(ctx); err != nil {
			if isUniqueViolation(err) {
				return ErrAppNameTaken
			}
			return fmt.Errorf("insert app: %w", err)
		}
		rows := []any{
			&Community{ID: NewID(), AppID: app.ID, Name: display},
			&Shop{ID: NewID(), AppID: app.ID, Name: display, Currency: "USD"},
			&Membership{ID: NewID(), AppID: app.ID, UserID: in.CreatorID, Role: RoleCreator},
		}
		for _, row := range rows {
			if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
				return fmt.Errorf("insert %T: %w", row, err)
			}
		}
		if err := recordRole(ctx, tx, app.ID, in.CreatorID); err != nil {
			return err
		}
		return writeAudit(ctx, tx, app.ID, in.CreatorID, "app.create", "", "Created "+in.Name)
	})
	if err != nil {
		return nil, fmt.Errorf("create app %s: %w", in.Name, err)
	}
	return app, nil
}

// SetAppSuspended suspends an app (the operator's call) or lifts it.
func (s *Storage) SetAppSuspended(ctx context.Context, idOrName string, suspended bool) (*App, error) {
	app, err := s.AppByIDOrName(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	status, action := "PUBLIC", "app.unsuspend"
	if suspended {
		status, action = AppSuspended, "app.suspend"
	}
	err = s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, app.ID)
		if _, err := tx.NewUpdate().Model((*App)(nil)).Set("status = ?", status).Set("updated_at = ?", time.Now().UTC()).
			Where("id = ?", app.ID).Exec(ctx); err != nil {
			return fmt.Errorf("set app status: %w", err)
		}
		return writeAudit(ctx, tx, app.ID, "", action, "", "Status "+status+" (operator)")
	})
	if err != nil {
		return nil, err
	}
	app.Status = status
	return app, nil
}

// lockApp loads the app row for update: the settings column is one JSON
// value, so two studio saves must not read the same old value.
func lockApp(ctx context.Context, tx bun.Tx, appID string) (*App, error) {
	if tx.Dialect().Name() == dialect.SQLite {
		if _, err := tx.ExecContext(ctx, "UPDATE apps SET name = name WHERE 0"); err != nil {
			return nil, fmt.Errorf("lock app: %w", err)
		}
	}
	app := new(App)
	q := tx.NewSelect().Model(app).Where("id = ?", appID)
	if tx.Dialect().Name() == dialect.PG {
		q = q.For("UPDATE")
	}
	if err := selectOne(ctx, q, "app"); err != nil {
		return nil, err
	}
	return app, nil
}

// updateApp runs change on the locked app row, saves it and writes the
// audit line, then drops the cached landing data and pages.
func (s *Storage) updateApp(ctx context.Context, appID, actorID, action, detail string, change func(ctx context.Context, tx bun.Tx, app *App) error) error {
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, appID)
		app, err := lockApp(ctx, tx, appID)
		if err != nil {
			return err
		}
		if err := change(ctx, tx, app); err != nil {
			return err
		}
		app.UpdatedAt = time.Now().UTC()
		if _, err := tx.NewUpdate().Model(app).WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("update app: %w", err)
		}
		return writeAudit(ctx, tx, appID, actorID, action, "", detail)
	})
	if err != nil {
		return err
	}
	return nil
}

var (
	langPattern    = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z]{2,4})?$`)
	versionPattern = regexp.MustCompile(`^[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}$`)
)

// ProfileInput is the studio's Profile and look form. Version is kept as
// it is when empty (the studio no longer asks for it); the link-in-bio
// switches are the links form's (SaveLinkSwitches).
type ProfileInput struct {
	DisplayName, MetaDescription, Keywords, Bio, Lang, Version string
	FooterOrder                                                []string
}

// CheckProfile validates a profile; field errors name the form inputs.
func CheckProfile(in ProfileInput) error {
	if err := CheckDisplayName(in.DisplayName); err != nil {
		return err
	}
	if utf8.RuneCountInString(in.MetaDescription) > 300 {
		return &ErrInvalid{Msg: "Description must be at most 300 characters", Field: "metaDescription"}
	}
	if err := CheckOneLine("metaDescription", "Description", in.MetaDescription); err != nil {
		return err
	}
	if utf8.RuneCountInString(in.Keywords) > 200 {
		return &ErrInvalid{Msg: "Keywords must be at most 200 characters", Field: "keywords"}
	}
	if err := CheckOneLine("keywords", "Keywords", in.Keywords); err != nil {
		return err
	}
	if len(in.Bio) > 20000 {
		return &ErrInvalid{Msg: "Bio must be at most 20,000 characters", Field: "bio"}
	}
	if !langPattern.MatchString(in.Lang) {
		return &ErrInvalid{Msg: "Language must be a language code like en or pt-BR", Field: "lang"}
	}
	if in.Version != "" && !versionPattern.MatchString(in.Version) {
		return &ErrInvalid{Msg: "Version must look like 1.0.0", Field: "version"}
	}
	seen := map[string]bool{}
	for _, f := range in.FooterOrder {
		known := false
		for _, d := range DefaultFooterOrder {
			known = known || d == f
		}
		if !known || seen[f] {
			return &ErrInvalid{Msg: "Footer order must list each of " + strings.Join(DefaultFooterOrder, ", ") + " once", Field: "footerOrder"}
		}
		seen[f] = true
	}
	if len(in.FooterOrder) != len(DefaultFooterOrder) {
		return &ErrInvalid{Msg: "Footer order must list each of " + strings.Join(DefaultFooterOrder, ", ") + " once", Field: "footerOrder"}
	}
	return nil
}

// SaveProfile writes the Profile and look form. The bio is stored as given
// and sanitised where it is shown (the landing view).
func (s *Storage) SaveProfile(ctx context.Context, appID, actorID string, in ProfileInput) error {
	in.DisplayName = strings.TrimSpace(in.DisplayName)
	if err := CheckProfile(in); err != nil {
		return err
	}
	return s.updateApp(ctx, appID, actorID, "settings.profile", "Profile and look", func(_ context.Context, _ bun.Tx, app *App) error {
		app.Bio = in.Bio
		if in.Version != "" {
			app.Version = in.Version
		}
		st := &app.Settings
		st.Basic.DisplayName, st.Basic.MetaDescription, st.Basic.Keywords, st.Basic.Lang = in.DisplayName, in.MetaDescription, in.Keywords, in.Lang
		st.UI.FooterOrder = append([]string(nil), in.FooterOrder...)
		return nil
	})
}

// SaveLinkSwitches turns the link-in-bio links on or off and says whether
// the landing page shows them (the switches beside the links).
func (s *Storage) SaveLinkSwitches(ctx context.Context, appID, actorID string, linksEnabled, showOnLanding bool) error {
	return s.updateApp(ctx, appID, actorID, "settings.links", "Link-in-bio switches", func(_ context.Context, _ bun.Tx, app *App) error {
		app.Settings.Features.Links.Enabled = linksEnabled
		app.Settings.LandingPage.ShowLinkInBio = showOnLanding
		return nil
	})
}

// SetAppImage sets the app's title image or banner to an uploaded image of
// the app (mediaID empty clears it).
func (s *Storage) SetAppImage(ctx context.Context, appID, actorID, which, mediaID string) error {
	column := map[string]string{"title": "title_media_id", "banner": "banner_media_id", "icon": "logo_media_id"}[which]
	if column == "" {
		return &ErrInvalid{Msg: "Unknown image " + which}
	}
	return s.updateApp(ctx, appID, actorID, "settings.image", "Changed the "+which+" image", func(ctx context.Context, tx bun.Tx, app *App) error {
		var id *string
		if mediaID != "" {
			n, err := tx.NewSelect().Model((*Media)(nil)).Where("id = ? AND app_id = ? AND type = ? AND status = ?", mediaID, appID, MediaImage, MediaUploaded).Count(ctx)
			if err != nil {
				return fmt.Errorf("check image: %w", err)
			}
			if n == 0 {
				return &ErrInvalid{Msg: "Image not found", Field: which}
			}
			id = &mediaID
		}
		switch which {
		case "title":
			app.TitleMediaID = id
		case "icon":
			// The app's square icon (issue 42 item 2): its logo.
			app.LogoMediaID = id
		default:
			app.BannerMediaID = id
		}
		return nil
	})
}

// LinkInput is one link-in-bio link as the studio edits it.
type LinkInput struct {
	Title, URL string
	Enabled    bool
}

// SaveLinks replaces the app's links (in display order) with the same
// rules as the CLI's SetAppLinks, and writes the audit line.
func (s *Storage) SaveLinks(ctx context.Context, app *App, actorID string, links []LinkInput) error {
	type raw struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Enabled *bool  `json:"enabled"`
	}
	in := make([]raw, 0, len(links))
	for _, l := range links {
		enabled := l.Enabled
		in = append(in, raw{Title: l.Title, URL: l.URL, Enabled: &enabled})
	}
	b, _ := json.Marshal(in)
	if err := s.SetAppLinks(ctx, app, string(b)); err != nil {
		return &ErrInvalid{Msg: err.Error(), Field: "links"}
	}
	return writeAudit(ctx, s.db, app.ID, actorID, "settings.links", "", fmt.Sprintf("Link-in-bio: %d links", len(links)))
}

// Gating modes of the Features form.
const (
	GatingOff      = "off"
	GatingRequired = "required"
	GatingLanding  = "landing"
)

// TierInput is one donation achievement tier as the studio edits it.
type TierInput struct {
	Name, Description string
	Amount            int64
}

// FeaturesInput is the studio's Features form.
type FeaturesInput struct {
	Community, AllowReactions, AllowComments, Stories, Store, Events, Donations, Chat bool
	SuggestedAmounts                                                                  []int64
	Tiers                                                                             []TierInput
	Gating, GatingDescription                                                         string
}

// CheckFeatures validates the Features form.
func CheckFeatures(in FeaturesInput) error {
	if len(in.SuggestedAmounts) > 6 {
		return &ErrInvalid{Msg: "At most 6 suggested amounts", Field: "suggestedAmounts"}
	}
	for _, a := range in.SuggestedAmounts {
		if a <= 0 || a > MaxDonation {
			return &ErrInvalid{Msg: "Suggested amounts must be between $0.01 and $10,000", Field: "suggestedAmounts"}
		}
	}
	if len(in.Tiers) > 10 {
		return &ErrInvalid{Msg: "At most 10 tiers", Field: "tiers"}
	}
	for i, t := range in.Tiers {
		n := utf8.RuneCountInString(strings.TrimSpace(t.Name))
		switch {
		case n < 1 || n > 60:
			return &ErrInvalid{Msg: fmt.Sprintf("Tier %d: a name of 1 to 60 characters is required", i+1), Field: "tiers"}
		case t.Amount <= 0 || t.Amount > MaxDonation:
			return &ErrInvalid{Msg: fmt.Sprintf("Tier %d: the amount must be between $0.01 and $10,000", i+1), Field: "tiers"}
		case utf8.RuneCountInString(t.Description) > 300:
			return &ErrInvalid{Msg: fmt.Sprintf("Tier %d: the description must be at most 300 characters", i+1), Field: "tiers"}
		}
	}
	switch in.Gating {
	case GatingOff, GatingRequired, GatingLanding:
	default:
		return &ErrInvalid{Msg: "Choose off, required or landing page only", Field: "gating"}
	}
	if utf8.RuneCountInString(in.GatingDescription) > 500 {
		return &ErrInvalid{Msg: "The gate's description must be at most 500 characters", Field: "gatingDescription"}
	}
	return nil
}

// SaveFeatures writes the Features form: the feature switches, donation
// amounts and tiers (replaced as a list, in order) and subscription gating.
func (s *Storage) SaveFeatures(ctx context.Context, appID, actorID string, in FeaturesInput) error {
	if err := CheckFeatures(in); err != nil {
		return err
	}
	return s.updateApp(ctx, appID, actorID, "settings.features", "Features", func(ctx context.Context, tx bun.Tx, app *App) error {
		f := &app.Settings.Features
		f.Community.Enabled = in.Community
		f.Community.Settings.AllowReactions, f.Community.Settings.AllowComments = in.AllowReactions, in.AllowComments
		f.Community.Settings.StoriesOff = !in.Stories
		f.Store.Enabled, f.Events.Enabled, f.Chat.Enabled, f.Donations.Enabled = in.Store, in.Events, in.Chat, in.Donations
		f.Donations.Settings.SuggestedAmounts = append([]int64{}, in.SuggestedAmounts...)
		g := &f.SubscriptionGating
		g.Enabled = in.Gating != GatingOff
		g.Settings.Required = in.Gating == GatingRequired
		g.Settings.LandingPageOnly = in.Gating == GatingLanding
		g.Settings.Description = in.GatingDescription
		if _, err := tx.NewDelete().Model((*DonationTier)(nil)).Where("app_id = ?", appID).Exec(ctx); err != nil {
			return fmt.Errorf("clear donation tiers: %w", err)
		}
		for i, t := range in.Tiers {
			row := &DonationTier{ID: NewID(), AppID: appID, Name: strings.TrimSpace(t.Name), RequiredAmount: t.Amount,
				Description: strings.TrimSpace(t.Description), Position: i}
			if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
				return fmt.Errorf("insert donation tier: %w", err)
			}
		}
		return nil
	})
}

// GatingMode reads the Features form's gating choice back from settings.
func GatingMode(st AppSettings) string {
	g := st.Features.SubscriptionGating
	switch {
	case !g.Enabled || (!g.Settings.Required && !g.Settings.LandingPageOnly):
		return GatingOff
	case g.Settings.LandingPageOnly:
		return GatingLanding
	}
	return GatingRequired
}

// ManagedApp is an app the user runs (CREATOR or ADMIN), for the /apps page.
type ManagedApp struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	Role        string `json:"role" tstype:"Role"`
	Status      string `json:"status"`
	// Published: everyone may open it (issue 43 item 1); a new app is not
	// until its creator publishes it from the launch checklist.
	Published bool `json:"published"`
}

// ManagedApps lists the apps the user is CREATOR or ADMIN of, by name.
func (s *Storage) ManagedApps(ctx context.Context, userID string) ([]ManagedApp, error) {
	var rows []struct {
		Name        string      `bun:"name"`
		Status      string      `bun:"status"`
		Unpublished bool        `bun:"unpublished"`
		Role        string      `bun:"role"`
		Settings    AppSettings `bun:"settings"`
	}
	if err := s.db.NewSelect().TableExpr("memberships AS m").Join("JOIN apps AS a ON a.id = m.app_id").
		ColumnExpr("a.name, a.status, a.unpublished, a.settings, m.role").Where("m.user_id = ? AND m.role IN (?)", userID, bun.List([]string{RoleCreator, RoleAdmin})).
		OrderExpr("a.name ASC").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("list managed apps: %w", err)
	}
	out := make([]ManagedApp, 0, len(rows))
	for _, r := range rows {
		out = append(out, ManagedApp{Name: r.Name, DisplayName: r.Settings.Basic.DisplayName, Role: r.Role, Status: r.Status, Published: !r.Unpublished})
	}
	return out, nil
}
