package store

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"
	_ "time/tzdata" // the app's time zone resolves on a machine without zoneinfo
)

// AppSettings mirrors the settings tree of SPEC.md section 3. It is stored as
// JSON text so the same column works on PostgreSQL and SQLite.
type AppSettings struct {
	Basic       BasicSettings       `json:"basic"`
	UI          UISettings          `json:"ui"`
	LandingPage LandingPageSettings `json:"landingPage"`
	Features    FeatureSettings     `json:"features"`
	Moderation  ModerationSettings  `json:"moderation"`
	Wallet      WalletSettings      `json:"wallet"`
	Newsletter  NewsletterSettings  `json:"newsletter"`
	// Theme is the app's colours, font and corners (store/theme.go).
	Theme ThemeSettings `json:"theme"`
}

// NewsletterSettings are how an app mails its posts (issue 44): the name
// its mails come from (the address stays MAIL_FROM, the operator's), where
// replies go, whether the composer's "Send by e-mail" starts ticked, and
// when the weekly digest goes out (a weekday, 0 Sunday, and an hour).
type NewsletterSettings struct {
	SenderName string `json:"senderName,omitempty"`
	ReplyTo    string `json:"replyTo,omitempty"`
	DefaultOn  bool   `json:"defaultOn"`
	DigestDay  int    `json:"digestDay"`
	DigestHour int    `json:"digestHour"`
}

// WalletSettings are an app's wallet rules (issue 24).
type WalletSettings struct {
	// WelcomeCredit (minor units) is put in the wallet of each member who
	// follows the app for the first time, once; 0 gives none. The demo app
	// has one so that a new member can try a purchase (README).
	WelcomeCredit int64 `json:"welcomeCredit"`
}

// ModerationSettings are an app's moderation rules (issue 26).
type ModerationSettings struct {
	// ReportThreshold is how many distinct members' reports hide content
	// until a moderator reviews it; 0 means DefaultReportThreshold.
	ReportThreshold int `json:"reportThreshold"`
	// HoldNewAccountLinks holds posts with links from accounts younger than
	// a day, or without a verified e-mail, for approval.
	HoldNewAccountLinks bool `json:"holdNewAccountLinks"`
}

// Threshold is the report threshold in force.
func (m ModerationSettings) Threshold() int {
	if m.ReportThreshold <= 0 {
		return DefaultReportThreshold
	}
	return m.ReportThreshold
}

type BasicSettings struct {
	DisplayName     string `json:"displayName"`
	MetaDescription string `json:"metaDescription"`
	Keywords        string `json:"keywords"`
	// Lang is the app's language (a BCP 47 tag such as en or pt-BR): the
	// lang attribute of its pages. Empty reads as en.
	Lang string `json:"lang,omitempty"`
	// TimeZone is the app's IANA time zone (Europe/Lisbon): scheduled
	// posts are written and shown in it. Empty reads as UTC.
	TimeZone string `json:"timeZone,omitempty"`
}

// Title is the app's display name, or its name (appName) when it has none:
// how pages, feeds and mails name the app.
func (b BasicSettings) Title(appName string) string {
	if b.DisplayName == "" {
		return appName
	}
	return b.DisplayName
}

// Location is the app's time zone (UTC when unset or unknown).
func (b BasicSettings) Location() *time.Location {
	if b.TimeZone != "" {
		if loc, err := time.LoadLocation(b.TimeZone); err == nil {
			return loc
		}
	}
	return time.UTC
}

type UISettings struct {
	FooterOrder []string `json:"footerOrder"`
}

type LandingPageSettings struct {
	ShowLinkInBio bool `json:"showLinkInBio"`
}

type FeatureSettings struct {
	Community          CommunityFeature `json:"community"`
	Store              SimpleFeature    `json:"store"`
	Events             EventsFeature    `json:"events"`
	Chat               SimpleFeature    `json:"chat"`
	Donations          DonationsFeature `json:"donations"`
	Links              LinksFeature     `json:"links"`
	SubscriptionGating GatingFeature    `json:"subscriptionGating"`
}

type SimpleFeature struct {
	Enabled bool `json:"enabled"`
}

type ContentSettings struct {
	// CreatePermission is a role name (CREATOR, ADMIN, ...); empty means CREATOR.
	CreatePermission string `json:"create_permission"`
}

type CommunityFeature struct {
	Enabled     bool                     `json:"enabled"`
	Name        string                   `json:"name"`
	Description string                   `json:"description"`
	Settings    CommunityFeatureSettings `json:"settings"`
}

type CommunityFeatureSettings struct {
	ContentSettings ContentSettings `json:"content_settings"`
	AllowReactions  bool            `json:"allowReactions"`
	AllowSharing    bool            `json:"allowSharing"`
	AllowReporting  bool            `json:"allowReporting"`
	AllowComments   bool            `json:"allowComments"`
	// StoriesOff turns stories off (the studio's Features switch): no strip,
	// no new stories. Off rather than on so apps made before it keep them.
	StoriesOff bool `json:"storiesOff,omitempty"`
}

type EventsFeature struct {
	Enabled  bool                  `json:"enabled"`
	Settings EventsFeatureSettings `json:"settings"`
}

type EventsFeatureSettings struct {
	ContentSettings ContentSettings `json:"content_settings"`
}

type DonationsFeature struct {
	Enabled  bool              `json:"enabled"`
	Settings DonationsSettings `json:"settings"`
}

type DonationsSettings struct {
	// SuggestedAmounts are in cents.
	SuggestedAmounts []int64 `json:"suggestedAmounts"`
}

type LinksFeature struct {
	Enabled  bool          `json:"enabled"`
	Settings LinksSettings `json:"settings"`
}

type LinksSettings struct {
	// Links is filled from the links table when the app is loaded; it is not
	// stored in the settings column.
	Links  []Link `json:"links"`
	Layout string `json:"layout"`
}

type GatingFeature struct {
	Enabled  bool           `json:"enabled"`
	Settings GatingSettings `json:"settings"`
}

type GatingSettings struct {
	Required        bool   `json:"required"`
	LandingPageOnly bool   `json:"landingPageOnly"`
	Description     string `json:"description"`
}

// DefaultFooterOrder is used when ui.footerOrder is unset.
var DefaultFooterOrder = []string{"HOME", "COMMUNITY", "STORE", "EVENTS", "CHAT"}

// DefaultSettings are the settings of a new app: community, store and events on.
func DefaultSettings(displayName string) AppSettings {
	s := AppSettings{}
	s.Basic.DisplayName = displayName
	s.Basic.Lang = "en"
	s.UI.FooterOrder = append([]string(nil), DefaultFooterOrder...)
	s.Features.Community.Enabled = true
	s.Features.Community.Settings.AllowReactions = true
	s.Features.Community.Settings.AllowComments = true
	s.Features.Store.Enabled = true
	s.Features.Events.Enabled = true
	s.Features.Links.Settings.Layout = "grid"
	// Link-in-bio is on from the start: links the creator adds show on
	// the landing page without a second switch to find.
	s.Features.Links.Enabled = true
	s.LandingPage.ShowLinkInBio = true
	s.normalize()
	return s
}

// normalize fills what clients read as lists: suggestedAmounts is always
// an array (a client maps over it), never null.
func (s *AppSettings) normalize() {
	if s.Features.Donations.Settings.SuggestedAmounts == nil {
		s.Features.Donations.Settings.SuggestedAmounts = []int64{}
	}
}

func (s AppSettings) Value() (driver.Value, error) {
	stored := s
	stored.Features.Links.Settings.Links = nil
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("marshal app settings: %w", err)
	}
	return string(b), nil
}

func (s *AppSettings) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*s = AppSettings{}
		s.normalize()
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("scan app settings: unexpected %T", src)
	}
	if err := json.Unmarshal(b, s); err != nil {
		return fmt.Errorf("unmarshal app settings: %w", err)
	}
	s.normalize()
	return nil
}
