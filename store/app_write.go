package store

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

var appNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,39}$`)

// reservedAppNames would read as routes or roles, not as a creator's app.
var reservedAppNames = map[string]bool{
	"api": true, "apps": true, "app": true, "static": true, "media": true, "media-upload": true, "admin": true,
	"auth": true, "authenticate": true, "signin": true, "signup": true, "login": true, "logout": true, "new": true,
	"healthz": true, "metrics": true, "manifest": true, "sw": true, "www": true, "marquee": true, "settings": true,
}

// CheckAppName applies the documented pattern: 2 to 40 lowercase letters,
// digits or hyphens, not a reserved word, and never the shape of an id (26
// characters of a-z and 2-7), so an API path's {appId} is never ambiguous.
func CheckAppName(name string) error {
	switch {
	case !appNamePattern.MatchString(name):
		return fmt.Errorf("app name %q: use 2 to 40 lowercase letters, digits or hyphens, starting with a letter or digit", name)
	case LooksLikeID(name):
		return fmt.Errorf("app name %q has the shape of an id (26 characters of a-z and 2-7); add a hyphen or choose another", name)
	case reservedAppNames[name]:
		return fmt.Errorf("app name %q is reserved", name)
	}
	return nil
}

// CreateApp creates an app with default settings, its community and store,
// and makes creatorID its CREATOR (the CLI's `app create`; the studio's
// creation goes through the same CreateAppWith). Like every new app it
// starts unpublished; CreatePublishedApp opens it at once.
func (s *Storage) CreateApp(ctx context.Context, name, creatorID string) (*App, error) {
	return s.CreateAppWith(ctx, NewApp{Name: name, DisplayName: name, CreatorID: creatorID})
}

// CreatePublishedApp is CreateApp for an app everyone may open at once
// (`app create --published`, fixtures).
func (s *Storage) CreatePublishedApp(ctx context.Context, name, creatorID string) (*App, error) {
	return s.CreateAppWith(ctx, NewApp{Name: name, DisplayName: name, CreatorID: creatorID, Published: true})
}

// UserByEmail finds a user by email (case-insensitive), or ErrNotFound.
func (s *Storage) UserByEmail(ctx context.Context, email string) (*User, error) {
	u := new(User)
	if err := selectOne(ctx, s.db.NewSelect().Model(u).Where("email = ?", NormalizeEmail(email)), "user "+email); err != nil {
		return nil, err
	}
	return u, nil
}

// SetAppField changes one app field or setting by its dotted path, e.g.
// "bio", "features.store.enabled" or "basic.displayName". The value is read
// as JSON when it parses (true, 12, ["A"]) and as a string otherwise.
func (s *Storage) SetAppField(ctx context.Context, appName, key, raw string) error {
	app, err := s.AppByIDOrName(ctx, appName)
	if err != nil {
		return err
	}
	switch key {
	case "bio":
		app.Bio = raw
	case "description":
		app.Description = raw
	case "status":
		if app.Status, err = CheckAppStatus(raw); err != nil {
			return err
		}
	case "version":
		app.Version = raw
	case linksKey:
		return s.SetAppLinks(ctx, app, raw)
	default:
		if strings.HasPrefix(key, linksKey+".") {
			return fmt.Errorf("set the whole list at once: %s='[{\"title\":\"Shop\",\"url\":\"https://example.com\"}]'", linksKey)
		}
		if app.Settings, err = setSetting(app.Settings, key, raw); err != nil {
			return err
		}
		if key == "basic.displayName" {
			if err := CheckDisplayName(app.Settings.Basic.DisplayName); err != nil {
				return err
			}
		}
		if key == "theme" || strings.HasPrefix(key, "theme.") {
			// The same rules as the studio's: a colour that fails contrast
			// is refused with a passing one to try.
			if app.Settings.Theme, err = CheckTheme(app.Settings.Theme); err != nil {
				return err
			}
		}
	}
	app.UpdatedAt = time.Now()
	if _, err := s.db.NewUpdate().Model(app).WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("update app %s: %w", appName, err)
	}
	s.InvalidateLanding(ctx, app.ID)
	return nil
}

func setSetting(settings AppSettings, key, raw string) (AppSettings, error) {
	var tree map[string]any
	b, _ := json.Marshal(settings)
	if err := json.Unmarshal(b, &tree); err != nil {
		return settings, fmt.Errorf("read settings: %w", err)
	}
	var value any
	if err := json.Unmarshal([]byte(raw), &value); err != nil {
		value = raw
	}
	parts := strings.Split(key, ".")
	node := tree
	for _, p := range parts[:len(parts)-1] {
		child, ok := node[p].(map[string]any)
		if !ok {
			return settings, fmt.Errorf("unknown setting %q", key)
		}
		node = child
	}
	last := parts[len(parts)-1]
	if _, ok := node[last]; !ok {
		return settings, fmt.Errorf("unknown setting %q", key)
	}
	node[last] = value
	b, _ = json.Marshal(tree)
	var out AppSettings
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return settings, fmt.Errorf("setting %q: %w", key, err)
	}
	return out, nil
}

// SetMemberRole gives the user a role in the app; role NONE removes it.
func (s *Storage) SetMemberRole(ctx context.Context, appID, userID, role string) error {
	if role != "NONE" && !IsMembershipRole(role) {
		return fmt.Errorf("unknown role %q (use one of %s or NONE)", role, strings.Join(MembershipRoles, ", "))
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, appID) // the landing counts members
		if role == "NONE" {
			if _, err := tx.NewDelete().Model((*Membership)(nil)).Where("app_id = ? AND user_id = ?", appID, userID).Exec(ctx); err != nil {
				return fmt.Errorf("remove membership: %w", err)
			}
		} else {
			m := &Membership{ID: NewID(), AppID: appID, UserID: userID, Role: role}
			if _, err := tx.NewInsert().Model(m).On("CONFLICT (app_id, user_id) DO UPDATE").Set("role = EXCLUDED.role").Exec(ctx); err != nil {
				return fmt.Errorf("set role: %w", err)
			}
		}
		return recordRole(ctx, tx, appID, userID)
	})
	if err != nil {
		return err
	}
	return nil
}

// linksKey is the settings path of link-in-bio links. They live in the links
// table, not in the settings column, so setting them goes through
// SetAppLinks rather than the settings tree (which would drop them).
const linksKey = "features.links.settings.links"

// SetAppLinks replaces the app's link-in-bio links with a JSON list of
// {title, url, icon?, enabled?} in display order. Each link needs a title and
// an http(s) URL; a bad list changes nothing and says what is wrong.
func (s *Storage) SetAppLinks(ctx context.Context, app *App, raw string) error {
	var in []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Icon    string `json:"icon"`
		Enabled *bool  `json:"enabled"`
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("%s must be a JSON list of {\"title\", \"url\", \"icon\", \"enabled\"}: %w", linksKey, err)
	}
	links := make([]Link, 0, len(in))
	for i, l := range in {
		title, link := strings.TrimSpace(l.Title), strings.TrimSpace(l.URL)
		u, err := url.Parse(link)
		if title == "" {
			return fmt.Errorf("link %d: a title is required", i+1)
		}
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("link %d (%s): the url must start with http:// or https://", i+1, title)
		}
		enabled := l.Enabled == nil || *l.Enabled
		links = append(links, Link{ID: NewID(), AppID: app.ID, Title: title, URL: link, Icon: strings.TrimSpace(l.Icon), Enabled: enabled, Position: i})
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, app.ID)
		if _, err := tx.NewDelete().Model((*Link)(nil)).Where("app_id = ?", app.ID).Exec(ctx); err != nil {
			return fmt.Errorf("clear links of %s: %w", app.Name, err)
		}
		if len(links) > 0 {
			if _, err := tx.NewInsert().Model(&links).Exec(ctx); err != nil {
				return fmt.Errorf("insert links of %s: %w", app.Name, err)
			}
		}
		_, err := tx.NewUpdate().Model((*App)(nil)).Set("updated_at = ?", time.Now()).Where("id = ?", app.ID).Exec(ctx)
		return err
	})
	if err != nil {
		return err
	}
	return nil
}
