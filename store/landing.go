package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/microcosm-cc/bluemonday"
)

// LandingTTL bounds staleness for what writes cannot invalidate: time passing
// (an upcoming event becoming past) and signed media URLs expiring.
const LandingTTL = 10 * time.Minute

const (
	landingPosts  = 6
	landingEvents = 5
	landingItems  = 6
)

// AppView is the app data of SPEC.md section 3 as GET /api/app/{appId}/landing
// returns it; the landing page renders from exactly this value.
type AppView struct {
	ID                       string         `json:"id"`
	Name                     string         `json:"name"`
	Status                   string         `json:"status"`
	Version                  string         `json:"version"`
	Description              string         `json:"description"`
	Bio                      string         `json:"bio"`
	Media                    []MediaView    `json:"media"`
	Logo                     *MediaView     `json:"logo"`
	Banner                   *MediaView     `json:"banner"`
	Title                    *MediaView     `json:"title"`
	Splash                   *MediaView     `json:"splash"`
	Settings                 AppSettings    `json:"settings"`
	DonationTiers            []DonationTier `json:"donationTiers"`
	SuggestedDonationAmounts []int64        `json:"suggestedDonationAmounts"`
	Community                *CommunityView `json:"community"`
	Store                    *StoreView     `json:"store"`
	Events                   []EventView    `json:"events"`
	Count                    AppCount       `json:"_count"`
	RecentPosts              []MessageView  `json:"recentPosts"`
	UpcomingEvents           []EventView    `json:"upcomingEvents"`
	FeaturedStoreItems       []ItemView     `json:"featuredStoreItems"`
	// Unpublished: only the app's staff may open it (issue 43 item 1);
	// nobody else ever receives this view, so it is said only when true.
	Unpublished bool `json:"unpublished,omitempty"`
	// BaseURL and OnDomain are set on the copy a page renders, never on
	// the cached view: where the app lives (its verified domain's origin,
	// or PUBLIC_URL/apps/{name}), and whether this page is on that domain,
	// whose links carry no /apps/{name} prefix (pages/lib/links.ts).
	BaseURL  string `json:"baseUrl,omitempty"`
	OnDomain bool   `json:"onDomain,omitempty"`
}

type CommunityView struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Count       PostCount     `json:"_count"`
	Posts       []MessageView `json:"posts"`
}

type PostCount struct {
	Posts int `json:"posts"`
}

type StoreView struct {
	ID       string     `json:"id"`
	Currency string     `json:"currency"`
	Items    []ItemView `json:"items"`
}

type AppCount struct {
	Members int `json:"members"`
	Events  int `json:"events"`
	Quizzes int `json:"quizzes"`
	Media   int `json:"media"`
}

// Every cache entry of an app is keyed by its id: names are resolved to ids
// first, so a name can never reach another app's entries. Landing data is
// also keyed by the app's versions (landingVersions), kept in the database:
// a write made while Redis was unreachable, or racing a read, can never
// leave older data under the key the next read uses.
func landingKey(appID, version string) string { return "landing:v3:" + appID + ":" + version }

func landingCountsKey(appID, version string) string {
	return "landing-counts:v1:" + appID + ":" + version
}

func appIDKey(name string) string { return "app-id:v1:" + name }

// AppIDOf resolves an app id or name to the app's id. Names never change, so
// the answer is cached; an id is answered as it is (LooksLikeID).
func (s *Storage) AppIDOf(ctx context.Context, idOrName string) (string, error) {
	if LooksLikeID(idOrName) {
		return idOrName, nil
	}
	if b, ok, err := s.cache.Get(ctx, appIDKey(idOrName)); err == nil && ok {
		return string(b), nil
	}
	app, err := s.AppByIDOrName(ctx, idOrName)
	if err != nil {
		return "", err
	}
	if err := s.cache.Set(ctx, appIDKey(app.Name), []byte(app.ID), LandingTTL); err != nil {
		s.cacheWarn("app id cache write failed", err)
	}
	return app.ID, nil
}

type landingMemoEntry struct {
	key     string
	view    *AppView
	expires time.Time
}

// Landing returns the landing data of an app by id or name. It is built in
// two parts, each cached under its version: the content (posts, events,
// items, settings), rebuilt only when the app's page version moves, and the
// engagement on it (reactions and reply counts of the posts shown, the
// member count), re-read in three small queries when a like, a reply or a
// follow moves the engagement version. A failing cache is logged and
// skipped: the database answers.
func (s *Storage) Landing(ctx context.Context, idOrName string) (*AppView, error) {
	appID, v, err := s.appVersions(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	versions := struct{ content, engagement string }{v.Key(), v.DataKey()}
	// The view of one version is decoded once per process and shared
	// read-only: every API call loads the app's landing data for its scope,
	// and decoding it each time was a fifth of a feed call.
	if memo, ok := s.landingMemo.Load(appID); ok {
		if e := memo.(landingMemoEntry); e.key == versions.engagement && time.Now().Before(e.expires) {
			return e.view, nil
		}
	}
	// One build per key at a time in this process: after a write, every
	// request of the app wants the landing data at once, and thirty builds
	// of the same data were the cost.
	built, err, _ := s.landingBuilds.Do(appID+":"+versions.engagement, func() (any, error) {
		base, err := s.landingContent(ctx, appID, versions.content)
		if err != nil {
			return nil, err
		}
		counts, err := s.landingEngagement(ctx, appID, versions.engagement, base)
		if err != nil {
			return nil, err
		}
		view := counts.applyTo(base)
		s.landingMemo.Store(appID, landingMemoEntry{key: versions.engagement, view: view, expires: time.Now().Add(LandingTTL)})
		return view, nil
	})
	if err != nil {
		return nil, err
	}
	// Callers of one version share its lists read-only; the top level is
	// each caller's own.
	view := *built.(*AppView)
	return &view, nil
}

// LandingContent is the landing data of an app by id or name without
// its engagement: its posts' reactions and reply counts and its member
// count are as of the content's build, not now. It is what deciding a
// viewer's access reads (settings, roles, the community's id): every like
// moves the engagement, and reading the counts again for the next write's
// access check was a write's largest cost (scripts/bench's mixed mode).
func (s *Storage) LandingContent(ctx context.Context, idOrName string) (*AppView, error) {
	appID, v, err := s.appVersions(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	built, err, _ := s.landingBuilds.Do(appID+":content:"+v.Key(), func() (any, error) {
		return s.landingContent(ctx, appID, v.Key())
	})
	if err != nil {
		return nil, err
	}
	view := *built.(*AppView)
	return &view, nil
}

// appVersions resolves an app's id or name and its current versions.
func (s *Storage) appVersions(ctx context.Context, idOrName string) (string, Versions, error) {
	appID, err := s.AppIDOf(ctx, idOrName)
	if err != nil {
		return "", Versions{}, err
	}
	v, err := s.CurrentVersions(ctx, appID)
	return appID, v, err
}

// landingContent is the landing data as built from the database, cached per
// content version.
func (s *Storage) landingContent(ctx context.Context, appID, version string) (*AppView, error) {
	key := landingKey(appID, version)
	// Kept decoded for its version too: each like moves the engagement
	// version, and decoding the content again for each was the cost of
	// the next landing call.
	if memo, ok := s.landingContentMemo.Load(appID); ok {
		if e := memo.(landingMemoEntry); e.key == key && time.Now().Before(e.expires) {
			return e.view, nil
		}
	}
	remember := func(view *AppView) *AppView {
		s.landingContentMemo.Store(appID, landingMemoEntry{key: key, view: view, expires: time.Now().Add(LandingTTL)})
		return view
	}
	b, ok, cacheErr := s.cache.Get(ctx, key)
	if cacheErr != nil {
		s.cacheWarn("landing cache read failed; using the database", cacheErr)
	} else if ok {
		var view AppView
		if err := json.Unmarshal(b, &view); err == nil {
			return remember(&view), nil
		}
	}
	app, err := s.AppByIDOrName(ctx, appID)
	if err != nil {
		return nil, err
	}
	s.landingBuildCount.Add(1)
	view, err := s.buildLanding(ctx, app, time.Now())
	if err != nil {
		return nil, err
	}
	// A cache that just failed to read is not asked to write: when Redis is
	// down each page pays its timeout once, not twice.
	if b, err := json.Marshal(view); err == nil && cacheErr == nil && key != "" {
		if err := s.cache.Set(ctx, key, b, LandingTTL); err != nil {
			s.cacheWarn("landing cache write failed", err)
		}
	}
	return remember(view), nil
}

// landingCounts is the engagement part of the landing data.
type landingCounts struct {
	Reactions map[string][]ReactionView `json:"reactions"`
	Replies   map[string]int            `json:"replies"`
	Members   int                       `json:"members"`
}

func (s *Storage) landingEngagement(ctx context.Context, appID, version string, base *AppView) (*landingCounts, error) {
	key := landingCountsKey(appID, version)
	b, ok, cacheErr := s.cache.Get(ctx, key)
	if cacheErr == nil && ok {
		var counts landingCounts
		if err := json.Unmarshal(b, &counts); err == nil {
			return &counts, nil
		}
	}
	counts, err := s.reactionsAndReplies(ctx, base.shownPostIDs())
	if err != nil {
		return nil, fmt.Errorf("landing engagement: %w", err)
	}
	members, err := s.db.NewSelect().Model((*Membership)(nil)).Where("app_id = ?", appID).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("count members: %w", err)
	}
	counts.Members = int(members)
	if b, err := json.Marshal(counts); err == nil && cacheErr == nil {
		if err := s.cache.Set(ctx, key, b, LandingTTL); err != nil {
			s.cacheWarn("landing counts cache write failed", err)
		}
	}
	return counts, nil
}

func (v *AppView) shownPostIDs() []string {
	var ids []string
	for _, p := range v.RecentPosts {
		ids = append(ids, p.ID)
	}
	if v.Community != nil {
		for _, p := range v.Community.Posts {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// applyToPosts returns a copy of posts with these counts; posts are not
// changed (they may be shared).
func (c *landingCounts) applyToPosts(posts []MessageView) []MessageView {
	out := make([]MessageView, len(posts))
	for i, p := range posts {
		p.Reactions = c.Reactions[p.ID]
		if p.Reactions == nil {
			p.Reactions = []ReactionView{}
		}
		p.Count.Reactions, p.Count.Replies = len(p.Reactions), c.Replies[p.ID]
		out[i] = p
	}
	return out
}

// applyTo returns a copy of base with these counts; base is not changed.
func (c *landingCounts) applyTo(base *AppView) *AppView {
	view := *base
	view.RecentPosts = c.applyToPosts(base.RecentPosts)
	if base.Community != nil {
		community := *base.Community
		community.Posts = c.applyToPosts(base.Community.Posts)
		view.Community = &community
	}
	view.Count.Members = c.Members
	return &view
}

// InvalidateLanding bumps the page version of an app: its landing data and
// every cached page of it are rebuilt on their next request. Every write
// that changes what the landing shows calls it. (The data is keyed by the
// version, so nothing needs deleting: old entries age out.)
func (s *Storage) InvalidateLanding(ctx context.Context, appIDOrName string) {
	appID, err := s.AppIDOf(ctx, appIDOrName)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			s.logger.Warn("landing invalidation: app lookup failed", "app", appIDOrName, "err", err)
		}
		return
	}
	s.InvalidateApp(ctx, appID)
}

var bioPolicy = bluemonday.UGCPolicy()

func (s *Storage) buildLanding(ctx context.Context, app *App, now time.Time) (*AppView, error) {
	db := s.db
	view := &AppView{
		ID: app.ID, Name: app.Name, Status: app.Status, Version: app.Version, Unpublished: app.Unpublished,
		Description: app.Description, Bio: bioPolicy.Sanitize(app.Bio), Settings: app.Settings,
		Media: []MediaView{}, DonationTiers: []DonationTier{}, Events: []EventView{},
		RecentPosts: []MessageView{}, UpcomingEvents: []EventView{}, FeaturedStoreItems: []ItemView{},
		SuggestedDonationAmounts: app.Settings.Features.Donations.Settings.SuggestedAmounts,
	}
	if view.SuggestedDonationAmounts == nil {
		view.SuggestedDonationAmounts = []int64{}
	}
	if len(view.Settings.UI.FooterOrder) == 0 {
		view.Settings.UI.FooterOrder = append([]string(nil), DefaultFooterOrder...)
	}
	if view.Settings.Features.Links.Settings.Layout == "" {
		view.Settings.Features.Links.Settings.Layout = "grid"
	}

	media, err := s.mediaViews(ctx, db, derefIDs(app.LogoMediaID, app.BannerMediaID, app.TitleMediaID, app.SplashMediaID))
	if err != nil {
		return nil, err
	}
	view.Logo, view.Banner = pick(media, app.LogoMediaID), pick(media, app.BannerMediaID)
	view.Title, view.Splash = pick(media, app.TitleMediaID), pick(media, app.SplashMediaID)

	links, err := s.LinksOfApp(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	view.Settings.Features.Links.Settings.Links = links

	features := app.Settings.Features
	if features.Donations.Enabled {
		if err := db.NewSelect().Model(&view.DonationTiers).Where("app_id = ?", app.ID).Order("position ASC").Scan(ctx); err != nil {
			return nil, fmt.Errorf("load donation tiers: %w", err)
		}
	}

	if err := s.landingCommunity(ctx, app, view); err != nil {
		return nil, err
	}
	if features.Events.Enabled {
		var events []Event
		if err := db.NewSelect().Model(&events).Where("app_id = ? AND end_date >= ? AND hidden = ''", app.ID, now).
			Order("start_date ASC").Limit(landingEvents).Scan(ctx); err != nil {
			return nil, fmt.Errorf("load upcoming events: %w", err)
		}
		if view.UpcomingEvents, err = s.eventViews(ctx, db, events); err != nil {
			return nil, err
		}
		view.Events = view.UpcomingEvents
	}
	if features.Store.Enabled {
		if err := s.landingStore(ctx, app, view); err != nil {
			return nil, err
		}
	}

	counts := []struct {
		dst   *int
		model any
	}{
		{&view.Count.Members, (*Membership)(nil)},
		{&view.Count.Events, (*Event)(nil)},
		{&view.Count.Media, (*Media)(nil)},
	}
	for _, c := range counts {
		n, err := db.NewSelect().Model(c.model).Where("app_id = ?", app.ID).Count(ctx)
		if err != nil {
			return nil, fmt.Errorf("count %T: %w", c.model, err)
		}
		*c.dst = int(n)
	}
	return view, nil
}

func (s *Storage) landingCommunity(ctx context.Context, app *App, view *AppView) error {
	community, err := s.CommunityOfApp(ctx, app.ID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	cv := &CommunityView{ID: community.ID, Name: community.Name, Description: community.Description, Posts: []MessageView{}}
	view.Community = cv
	if !app.Settings.Features.Community.Enabled {
		return nil
	}
	posts, err := s.db.NewSelect().Model((*Message)(nil)).
		Where("community_id = ? AND type = ? AND hidden = ''", community.ID, MessagePost).Count(ctx)
	if err != nil {
		return fmt.Errorf("count posts: %w", err)
	}
	cv.Count.Posts = int(posts)
	var recent []Message
	if err := s.db.NewSelect().Model(&recent).Where("community_id = ? AND type = ? AND hidden = ''", community.ID, MessagePost).
		Order("created_at DESC", "id DESC").Limit(landingPosts).Scan(ctx); err != nil {
		return fmt.Errorf("load recent posts: %w", err)
	}
	if cv.Posts, err = s.messageViews(ctx, s.db, recent); err != nil {
		return err
	}
	view.RecentPosts = cv.Posts
	return nil
}

func (s *Storage) landingStore(ctx context.Context, app *App, view *AppView) error {
	shop := new(Shop)
	err := selectOne(ctx, s.db.NewSelect().Model(shop).Where("app_id = ?", app.ID), "store of "+app.ID)
	if errors.Is(err, ErrNotFound) {
		return nil // an app without a store row simply shows no items
	}
	if err != nil {
		return err
	}
	var items []StoreItem
	if err := s.db.NewSelect().Model(&items).Where("store_id = ? AND is_featured = ? AND deleted_at IS NULL AND type <> ?", shop.ID, true, ItemSubscription).
		Order("created_at DESC", "id DESC").Limit(landingItems).Scan(ctx); err != nil {
		return fmt.Errorf("load featured items: %w", err)
	}
	featured, err := s.itemViews(ctx, s.db, items)
	if err != nil {
		return err
	}
	view.FeaturedStoreItems = featured
	view.Store = &StoreView{ID: shop.ID, Currency: shop.Currency, Items: featured}
	return nil
}
