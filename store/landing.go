package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
// first, so a name can never reach another app's entries.
func landingKey(appID string) string { return "landing:v2:" + appID }

func appIDKey(name string) string { return "app-id:v1:" + name }

// AppIDOf resolves an app id or name to the app's id. Names never change, so
// the answer is cached; an id is answered as it is (LooksLikeID).
func (s *Storage) AppIDOf(ctx context.Context, idOrName string) (string, error) {
	if LooksLikeID(idOrName) {
		return idOrName, nil
	}
	if b, ok, err := s.Cache.Get(ctx, appIDKey(idOrName)); err == nil && ok {
		return string(b), nil
	}
	app, err := s.AppByIDOrName(ctx, idOrName)
	if err != nil {
		return "", err
	}
	if err := s.Cache.Set(ctx, appIDKey(app.Name), []byte(app.ID), LandingTTL); err != nil {
		s.Logger.Warn("app id cache write failed", "err", err)
	}
	return app.ID, nil
}

// Landing returns the landing data of an app by id or name, from the cache
// when it can. A failing cache is logged and skipped: the database answers.
func (s *Storage) Landing(ctx context.Context, idOrName string) (*AppView, error) {
	appID, err := s.AppIDOf(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	key := s.landingCacheKey(ctx, appID)
	// In process the key carries the page version, so the view decoded for
	// it stays right until the version moves: every API call loads the
	// app's landing data for its scope, and decoding it each time was a
	// fifth of a feed call. Callers share it read-only, as they share the
	// page cache's (server/pagecache.go appView).
	if memo, ok := s.landingMemo.Load(appID); ok && memo.(landingMemoEntry).key == key && time.Now().Before(memo.(landingMemoEntry).expires) {
		return memo.(landingMemoEntry).view, nil
	}
	_, versioned := s.Cache.(*MemoryCache)
	b, ok, cacheErr := s.Cache.Get(ctx, key)
	if cacheErr != nil {
		s.Logger.Warn("landing cache read failed; using the database", "err", cacheErr)
	} else if ok {
		var view AppView
		if err := json.Unmarshal(b, &view); err == nil {
			if versioned {
				s.landingMemo.Store(appID, landingMemoEntry{key: key, view: &view, expires: time.Now().Add(LandingTTL)})
			}
			return &view, nil
		}
	}
	app, err := s.AppByIDOrName(ctx, appID)
	if err != nil {
		return nil, err
	}
	view, err := s.buildLanding(ctx, app, time.Now())
	if err != nil {
		return nil, err
	}
	// A cache that just failed to read is not asked to write: when Redis is
	// down each page pays its timeout once, not twice.
	if b, err := json.Marshal(view); err == nil && cacheErr == nil {
		if err := s.Cache.Set(ctx, key, b, LandingTTL); err != nil {
			s.Logger.Warn("landing cache write failed", "err", err)
		}
	}
	return view, nil
}

// landingCacheKey is landingKey, and with the in-process cache also the app's
// page version: the CLI, another process, cannot delete from this memory, but
// its bump of the version in the database reaches it (one primary-key read).
type landingMemoEntry struct {
	key     string
	view    *AppView
	expires time.Time
}

func (s *Storage) landingCacheKey(ctx context.Context, appID string) string {
	if _, local := s.Cache.(*MemoryCache); !local {
		return landingKey(appID)
	}
	v, err := s.PageVersions(ctx, appID)
	if err != nil {
		return landingKey(appID) + ":unversioned"
	}
	return landingKey(appID) + ":" + strconv.FormatInt(v[appID], 10)
}

// InvalidateLanding drops the cached landing data of an app and bumps its
// page version. Every write that changes what the landing shows calls it.
func (s *Storage) InvalidateLanding(ctx context.Context, appIDOrName string) {
	appID, err := s.AppIDOf(ctx, appIDOrName)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			s.Logger.Warn("landing invalidation: app lookup failed", "app", appIDOrName, "err", err)
		}
		return
	}
	if err := s.Cache.Delete(ctx, landingKey(appID)); err != nil {
		s.Logger.Warn("landing cache invalidation failed", "app", appID, "err", err)
	}
	// Bumped after the delete: a page rendered for the new version must not
	// find the old landing data still cached.
	s.InvalidateApp(ctx, appID)
}

// RefreshLandingReactions keeps the cached landing data when a reaction
// changes: the reactions of the one post it shows are re-read and patched in,
// and only the rendered pages (which print the count) are dropped.
// Likes are frequent; rebuilding the whole landing for each would be waste.
func (s *Storage) RefreshLandingReactions(ctx context.Context, appID, messageID string) {
	key := s.landingCacheKey(ctx, appID)
	b, ok, err := s.Cache.Get(ctx, key)
	if err != nil || !ok {
		s.InvalidateLanding(ctx, appID)
		return
	}
	var view AppView
	if json.Unmarshal(b, &view) != nil {
		s.InvalidateLanding(ctx, appID)
		return
	}
	lists := [][]MessageView{view.RecentPosts}
	if view.Community != nil {
		lists = append(lists, view.Community.Posts)
	}
	var reactions []ReactionView
	shown := false
	for _, list := range lists {
		for i := range list {
			if list[i].ID != messageID {
				continue
			}
			if !shown {
				if reactions, err = s.ReactionsOf(ctx, messageID); err != nil {
					s.InvalidateLanding(ctx, appID)
					return
				}
				shown = true
			}
			list[i].Reactions, list[i].Count.Reactions = reactions, len(reactions)
		}
	}
	if !shown {
		// The post's own page and the community feed print the count.
		s.InvalidateApp(ctx, appID)
		return
	}
	patched, err := json.Marshal(view)
	if err != nil {
		s.InvalidateLanding(ctx, appID)
		return
	}
	if _, local := s.Cache.(*MemoryCache); local {
		// The in-process key carries the page version (landingCacheKey):
		// bump, then file the patch under the new version.
		s.InvalidateApp(ctx, appID)
		key = s.landingCacheKey(ctx, appID)
		if err := s.Cache.Set(ctx, key, patched, LandingTTL); err != nil {
			s.InvalidateLanding(ctx, appID)
		}
		return
	}
	if err := s.Cache.Set(ctx, key, patched, LandingTTL); err != nil {
		s.InvalidateLanding(ctx, appID)
		return
	}
	// Bumped once the landing data is right (see InvalidateLanding).
	s.InvalidateApp(ctx, appID)
}

// InvalidateLandingShowing drops the landing of appID only when it shows
// message messageID: a like or a reply on an older post changes nothing the
// landing shows, so it keeps its cache.
func (s *Storage) InvalidateLandingShowing(ctx context.Context, appID, messageID string) {
	// Whatever the landing shows, the post's own page changed.
	defer s.InvalidateApp(ctx, appID)
	b, ok, err := s.Cache.Get(ctx, landingKey(appID))
	if err != nil || !ok {
		// Nothing cached (or unknown): dropping the page is the safe choice.
		s.InvalidateLanding(ctx, appID)
		return
	}
	var view struct {
		RecentPosts []struct {
			ID string `json:"id"`
		} `json:"recentPosts"`
		Community *struct {
			Posts []struct {
				ID string `json:"id"`
			} `json:"posts"`
		} `json:"community"`
	}
	if json.Unmarshal(b, &view) != nil {
		s.InvalidateLanding(ctx, appID)
		return
	}
	shown := false
	for _, p := range view.RecentPosts {
		shown = shown || p.ID == messageID
	}
	if view.Community != nil {
		for _, p := range view.Community.Posts {
			shown = shown || p.ID == messageID
		}
	}
	if shown {
		s.InvalidateLanding(ctx, appID)
	}
}

var bioPolicy = bluemonday.UGCPolicy()

func (s *Storage) buildLanding(ctx context.Context, app *App, now time.Time) (*AppView, error) {
	db := s.DB
	view := &AppView{
		ID: app.ID, Name: app.Name, Status: app.Status, Version: app.Version,
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
	posts, err := s.DB.NewSelect().Model((*Message)(nil)).
		Where("community_id = ? AND type = ? AND hidden = ''", community.ID, MessagePost).Count(ctx)
	if err != nil {
		return fmt.Errorf("count posts: %w", err)
	}
	cv.Count.Posts = int(posts)
	var recent []Message
	if err := s.DB.NewSelect().Model(&recent).Where("community_id = ? AND type = ? AND hidden = ''", community.ID, MessagePost).
		Order("created_at DESC", "id DESC").Limit(landingPosts).Scan(ctx); err != nil {
		return fmt.Errorf("load recent posts: %w", err)
	}
	if cv.Posts, err = s.messageViews(ctx, s.DB, recent); err != nil {
		return err
	}
	view.RecentPosts = cv.Posts
	return nil
}

func (s *Storage) landingStore(ctx context.Context, app *App, view *AppView) error {
	shop := new(Shop)
	err := selectOne(ctx, s.DB.NewSelect().Model(shop).Where("app_id = ?", app.ID), "store of "+app.ID)
	if errors.Is(err, ErrNotFound) {
		return nil // an app without a store row simply shows no items
	}
	if err != nil {
		return err
	}
	var items []StoreItem
	if err := s.DB.NewSelect().Model(&items).Where("store_id = ? AND is_featured = ? AND deleted_at IS NULL", shop.ID, true).
		Order("created_at DESC", "id DESC").Limit(landingItems).Scan(ctx); err != nil {
		return fmt.Errorf("load featured items: %w", err)
	}
	featured, err := s.itemViews(ctx, s.DB, items)
	if err != nil {
		return err
	}
	view.FeaturedStoreItems = featured
	view.Store = &StoreView{ID: shop.ID, Currency: shop.Currency, Items: featured}
	return nil
}
