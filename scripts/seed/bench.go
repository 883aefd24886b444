package seed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"marquee/server/auth"
	"marquee/store"
)

// BenchSizes is how much BenchData writes into its one app.
type BenchSizes struct {
	App    string
	Posts  int
	Items  int
	Events int
	Users  int
}

// DefaultBenchSizes are the sizes issue #14 measures the API at.
var DefaultBenchSizes = BenchSizes{App: "bench", Posts: 100_000, Items: 10_000, Events: 1_000, Users: 500}

// BenchPassword signs in every bench user (creator@<app>.test,
// user1@<app>.test, ...).
const BenchPassword = "bench-password"

// BenchResult counts what BenchData wrote.
type BenchResult struct {
	AppID                                        string
	Users, Posts, Comments, Likes, Items, Events int
	Attendees                                    int
}

// ErrBenchSeeded: the app already exists, so nothing was written. Seeding
// on top of an existing app would make sizes unknowable and break the
// uniqueness of names, so the command refuses instead.
var ErrBenchSeeded = errors.New("app already exists")

// benchBatch rows per INSERT: big enough that round trips do not dominate,
// small enough for SQLite's statement limits and PostgreSQL's memory.
const benchBatch = 1000

// BenchData fills one app with synthetic content at scale (100,000 posts,
// 10,000 store items and 1,000 events by default) for benchmarks: users with
// memberships, posts with tags, comments and likes, items with tags and
// variants, events with attendees. Everything is written with multi-row
// INSERTs in one transaction, so a failure leaves nothing half-seeded.
// Content is deterministic (no randomness) so runs are comparable.
func BenchData(ctx context.Context, db *bun.DB, sz BenchSizes) (*BenchResult, error) {
	hash, err := auth.HashPassword(BenchPassword)
	if err != nil {
		return nil, err
	}
	res, err := benchApp(ctx, db, sz, hash)
	if err != nil {
		return nil, err
	}
	return res, analyzeBench(ctx, db)
}

// BenchApps is BenchData for n apps named sz.App followed by 1 to n, each
// with sz of content (a platform's many creators, for `scripts/bench
// apps`). It answers the totals; AppID is the first app's.
func BenchApps(ctx context.Context, db *bun.DB, sz BenchSizes, n int) (*BenchResult, error) {
	hash, err := auth.HashPassword(BenchPassword)
	if err != nil {
		return nil, err
	}
	total := &BenchResult{}
	prefix := sz.App
	if prefix == "" {
		prefix = DefaultBenchSizes.App
	}
	for i := 1; i <= n; i++ {
		sz.App = fmt.Sprintf("%s%d", prefix, i)
		res, err := benchApp(ctx, db, sz, hash)
		if err != nil {
			return nil, err
		}
		if i == 1 {
			total.AppID = res.AppID
		}
		total.Users += res.Users
		total.Posts += res.Posts
		total.Comments += res.Comments
		total.Likes += res.Likes
		total.Items += res.Items
		total.Events += res.Events
		total.Attendees += res.Attendees
	}
	return total, analyzeBench(ctx, db)
}

// benchApp writes one app in one transaction.
func benchApp(ctx context.Context, db *bun.DB, sz BenchSizes, hash string) (*BenchResult, error) {
	if sz.App == "" {
		sz.App = DefaultBenchSizes.App
	}
	if sz.Users < 2 {
		sz.Users = 2
	}
	res := &BenchResult{}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		exists, err := tx.NewSelect().Model((*store.App)(nil)).Where("name = ?", sz.App).Exists(ctx)
		if err != nil {
			return fmt.Errorf("check app %s: %w", sz.App, err)
		}
		if exists {
			return fmt.Errorf("app %q: %w", sz.App, ErrBenchSeeded)
		}
		b := &bencher{tx: tx, sz: sz, hash: hash, now: time.Now().UTC().Truncate(time.Second), res: res}
		return b.run(ctx)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// analyzeBench gives the planner fresh statistics, and on PostgreSQL a
// visibility map, so it picks the indexes and counts can be index-only
// from the first request.
func analyzeBench(ctx context.Context, db *bun.DB) error {
	if db.Dialect().Name() == dialect.PG {
		for _, t := range []string{"messages", "reactions", "message_tags", "store_items", "store_item_tags", "variants", "events", "attendees", "users", "memberships", "tags"} {
			if _, err := db.ExecContext(ctx, "VACUUM ANALYZE "+t); err != nil {
				return fmt.Errorf("vacuum %s: %w", t, err)
			}
		}
	} else if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

type bencher struct {
	tx   bun.Tx
	sz   BenchSizes
	hash string
	now  time.Time
	res  *BenchResult

	app       *store.App
	community string
	shop      string
	users     []string // users[0] is the creator
	tags      []string
}

// insertAll writes rows (a slice of models) benchBatch at a time.
func insertAll[T any](ctx context.Context, tx bun.Tx, rows []T) error {
	for start := 0; start < len(rows); start += benchBatch {
		end := min(start+benchBatch, len(rows))
		chunk := rows[start:end]
		if _, err := tx.NewInsert().Model(&chunk).Exec(ctx); err != nil {
			return fmt.Errorf("insert %T: %w", chunk, err)
		}
	}
	return nil
}

var (
	benchTopics = []string{"synths", "tour", "art", "newmusic", "behindthescenes", "community", "events", "store",
		"vinyl", "live", "remix", "gear", "lyrics", "poster", "studio", "cats", "coffee", "travel", "film", "books"}
	benchWords = []string{"midnight", "lighthouse", "cello", "tape", "delay", "chorus", "poster", "canvas", "vinyl",
		"patch", "encore", "stems", "reverb", "melody", "sketch", "studio", "train", "notebook", "dusk", "moth"}
	benchCities = []string{"Portland", "Lisbon", "Osaka", "Berlin", "Austin", "Montreal", "Online", "Glasgow"}
)

// phrase makes varied, searchable text from n.
func phrase(n, words int) string {
	out := ""
	for i := 0; i < words; i++ {
		if i > 0 {
			out += " "
		}
		out += benchWords[(n*7+i*13+i*i)%len(benchWords)]
	}
	return out
}

func (b *bencher) run(ctx context.Context) error {
	steps := []func(context.Context) error{b.createUsers, b.createApp, b.createPosts, b.createItems, b.createEvents}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (b *bencher) createUsers(ctx context.Context) error {
	users := make([]store.User, b.sz.Users)
	for i := range users {
		name, email := fmt.Sprintf("%s_user%d", b.sz.App, i), fmt.Sprintf("user%d@%s.test", i, b.sz.App)
		if i == 0 {
			name, email = b.sz.App+"_creator", "creator@"+b.sz.App+".test"
		}
		created := b.now.AddDate(-1, 0, 0).Add(time.Duration(i) * time.Minute)
		users[i] = store.User{ID: store.NewID(), Username: name, Email: email, EmailVerified: true,
			PasswordHash: b.hash, CreatedAt: created, UpdatedAt: created}
		b.users = append(b.users, users[i].ID)
	}
	b.res.Users = len(users)
	return insertAll(ctx, b.tx, users)
}

func (b *bencher) createApp(ctx context.Context) error {
	settings := store.DefaultSettings("Bench Studio")
	settings.Features.Community.Name = "Bench Community"
	settings.Features.Community.Settings.ContentSettings.CreatePermission = store.RoleSubscriber
	settings.Features.Donations.Enabled = true
	b.app = &store.App{ID: store.NewID(), Name: b.sz.App, Status: "PUBLIC", Version: "1.0.0",
		Description: "Synthetic content at scale for benchmarks.", CreatorID: b.users[0], Settings: settings,
		CreatedAt: b.now.AddDate(-1, 0, 0), UpdatedAt: b.now}
	b.res.AppID = b.app.ID
	if _, err := b.tx.NewInsert().Model(b.app).Exec(ctx); err != nil {
		return fmt.Errorf("insert app: %w", err)
	}
	com := &store.Community{ID: store.NewID(), AppID: b.app.ID, Name: "Bench Community", CreatedAt: b.app.CreatedAt}
	shop := &store.Shop{ID: store.NewID(), AppID: b.app.ID, Name: "Bench Shop", Currency: "USD", CreatedAt: b.app.CreatedAt}
	b.community, b.shop = com.ID, shop.ID
	if _, err := b.tx.NewInsert().Model(com).Exec(ctx); err != nil {
		return fmt.Errorf("insert community: %w", err)
	}
	if _, err := b.tx.NewInsert().Model(shop).Exec(ctx); err != nil {
		return fmt.Errorf("insert store: %w", err)
	}
	members := make([]store.Membership, len(b.users))
	for i, id := range b.users {
		role := store.RoleFollower
		switch {
		case i == 0:
			role = store.RoleCreator
		case i%10 == 1:
			role = store.RoleModerator
		case i%2 == 0:
			role = store.RoleSubscriber
		}
		members[i] = store.Membership{ID: store.NewID(), AppID: b.app.ID, UserID: id, Role: role, CreatedAt: b.app.CreatedAt}
	}
	tags := make([]store.Tag, len(benchTopics))
	for i, name := range benchTopics {
		tags[i] = store.Tag{ID: store.NewID(), AppID: b.app.ID, Name: name}
		b.tags = append(b.tags, tags[i].ID)
	}
	if err := insertAll(ctx, b.tx, members); err != nil {
		return err
	}
	if err := store.RecordJoins(ctx, b.tx, b.app.ID); err != nil {
		return err
	}
	return insertAll(ctx, b.tx, tags)
}

// createPosts writes posts newest first, one a minute apart (100,000 posts
// span about ten weeks); every 4th post has a comment or three, most have
// likes, about half have tags.
func (b *bencher) createPosts(ctx context.Context) error {
	heart, _ := store.NormalizeReaction("heart")
	// Likers of a post must differ (one like per member and post).
	maxLikes := min(5, (len(b.users)-1)/3)
	for start := 0; start < b.sz.Posts; start += benchBatch {
		end := min(start+benchBatch, b.sz.Posts)
		var posts, replies []store.Message
		var likes []store.Reaction
		var tags []store.MessageTag
		for i := start; i < end; i++ {
			at := b.now.Add(-time.Duration(i) * time.Minute)
			p := store.Message{ID: store.NewID(), AppID: b.app.ID, CommunityID: b.community, SenderID: b.users[i%len(b.users)],
				Type: store.MessagePost, Content: fmt.Sprintf("Post %d: %s", b.sz.Posts-i, phrase(i, 8+i%20)),
				IsFeatured: i%500 == 0, CreatedAt: at, UpdatedAt: at}
			posts = append(posts, p)
			for t := 0; t < i%3; t++ {
				tags = append(tags, store.MessageTag{MessageID: p.ID, TagID: b.tags[(i+t*7)%len(b.tags)], AppID: b.app.ID})
			}
			for l := 0; l < i%6 && l < maxLikes; l++ {
				likes = append(likes, store.Reaction{ID: store.NewID(), AppID: b.app.ID, MessageID: p.ID,
					SenderID: b.users[(i+1+l*3)%len(b.users)], Reaction: heart, CreatedAt: at.Add(time.Duration(l+1) * time.Second)})
			}
			if i%4 == 0 {
				for r := 0; r <= i%3; r++ {
					parent := p.ID
					rat := at.Add(time.Duration(r+1) * 10 * time.Second)
					replies = append(replies, store.Message{ID: store.NewID(), AppID: b.app.ID, CommunityID: b.community,
						SenderID: b.users[(i+5+r)%len(b.users)], Type: store.MessageReply, Content: "Love this: " + phrase(i+r, 5),
						ParentMessageID: &parent, CreatedAt: rat, UpdatedAt: rat})
				}
			}
		}
		// Parents before replies, messages before what points at them.
		for _, rows := range []any{&posts, &replies, &likes, &tags} {
			if _, err := b.tx.NewInsert().Model(rows).Exec(ctx); err != nil {
				return fmt.Errorf("insert %T: %w", rows, err)
			}
		}
		b.res.Posts += len(posts)
		b.res.Comments += len(replies)
		b.res.Likes += len(likes)
	}
	return nil
}

// createItems writes store items of every type at prices from $1 to $250,
// some untracked (nil stock), some sold out, some with variants.
func (b *bencher) createItems(ctx context.Context) error {
	types := []string{store.ItemPhysical, store.ItemDigital, store.ItemService, store.ItemPhysical}
	items := make([]store.StoreItem, b.sz.Items)
	var tags []store.StoreItemTag
	var variants []store.Variant
	for i := range items {
		at := b.now.Add(-time.Duration(i) * 7 * time.Minute)
		price := int64(100 + (i*137)%25000)
		it := store.StoreItem{ID: store.NewID(), AppID: b.app.ID, StoreID: b.shop,
			Name:        fmt.Sprintf("%s %s #%d", phrase(i, 2), []string{"tee", "print", "pin", "lesson", "poster"}[i%5], i+1),
			Description: phrase(i+3, 12), Type: types[i%len(types)], Price: price, Currency: "USD",
			SKU: fmt.Sprintf("B-%06d", i), IsFeatured: i%200 == 0, CreatedAt: at, UpdatedAt: at}
		if i%3 == 0 {
			cp := price + price/4
			it.ComparePrice = &cp
		}
		if i%5 != 0 { // every 5th is untracked
			stock := int64((i * 31) % 40) // some 0: sold out
			it.Stock = &stock
		}
		items[i] = it
		for t := 0; t < 1+i%3; t++ {
			tags = append(tags, store.StoreItemTag{StoreItemID: it.ID, TagID: b.tags[(i+t*5)%len(b.tags)], AppID: b.app.ID})
		}
		if it.Type == store.ItemPhysical && i%2 == 0 {
			for v, size := range []string{"S", "M", "L"} {
				stock := int64(10 + v)
				variants = append(variants, store.Variant{ID: store.NewID(), AppID: b.app.ID, StoreItemID: it.ID,
					Name: "Size", Value: size, PriceAdjustment: int64(v * 200), Stock: &stock, Position: v})
			}
		}
	}
	b.res.Items = len(items)
	if err := insertAll(ctx, b.tx, items); err != nil {
		return err
	}
	if err := insertAll(ctx, b.tx, tags); err != nil {
		return err
	}
	return insertAll(ctx, b.tx, variants)
}

// createEvents spreads events from a year ago to a year ahead, every type,
// with a few attendees each.
func (b *bencher) createEvents(ctx context.Context) error {
	events := make([]store.Event, b.sz.Events)
	var attendees []store.Attendee
	half := b.sz.Events / 2
	for i := range events {
		start := b.now.Truncate(time.Hour).Add(time.Duration(i-half) * 17 * time.Hour)
		e := store.Event{ID: store.NewID(), AppID: b.app.ID, CreatorID: b.users[0],
			Name:        fmt.Sprintf("%s %s", phrase(i, 3), []string{"session", "meetup", "class", "party"}[i%4]),
			Description: phrase(i+1, 15), Location: benchCities[i%len(benchCities)], StartDate: start, EndDate: start.Add(2 * time.Hour),
			Type: store.EventTypes[i%len(store.EventTypes)], IsFeatured: i%50 == 0, IsOfficial: i%3 == 0,
			Settings: "{}", CreatedAt: b.now.AddDate(0, 0, -i%300), UpdatedAt: b.now}
		events[i] = e
		n := i % 12
		if n >= len(b.users) {
			n = len(b.users) - 1
		}
		for a := 0; a < n; a++ {
			role := store.AttendeeAttendee
			if a == 0 {
				role = store.AttendeeHost
			}
			attendees = append(attendees, store.Attendee{ID: store.NewID(), AppID: b.app.ID, EventID: e.ID,
				UserID: b.users[(i+a)%len(b.users)], Role: role, CreatedAt: e.CreatedAt})
		}
	}
	b.res.Events, b.res.Attendees = len(events), len(attendees)
	if err := insertAll(ctx, b.tx, events); err != nil {
		return err
	}
	return insertAll(ctx, b.tx, attendees)
}
