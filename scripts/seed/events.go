package seed

import (
	"context"
	"time"

	"marquee/store"
)

// eventSpec describes an event relative to now, so the demo always has past,
// ongoing and upcoming events whenever it is seeded.
type eventSpec struct {
	name, typ, loc, desc string
	start, length        time.Duration // start is an offset from now
	featured, official   bool
	banner               bool
	extra                int      // additional EventMedia pictures
	attendees            []string // usernames joining as ATTENDEE
}

var demoEvents = []eventSpec{
	// Past.
	{name: "Midnight Bloom Release Stream", typ: "LIVESTREAM", loc: "YouTube Live", start: -25 * day, length: 2 * time.Hour,
		desc:     "The album premiere: every track played live, with a Q&A about the writing sessions afterwards.",
		featured: true, official: true, banner: true, extra: 2, attendees: []string{"subscriber", "follower", "aria"}},
	{name: "Cover Art Painting Class", typ: "CLASS", loc: "Online (Zoom)", start: -14 * day, length: 90 * time.Minute,
		desc:     "Gouache basics: how the Midnight Bloom cover went from thumbnail sketch to final painting.",
		official: true, attendees: []string{"aria", "jonah"}},
	{name: "Record Store Day Signing", typ: "MEETUP", loc: "Spin Cycle Records, Portland", start: -7 * day, length: 3 * time.Hour,
		desc:   "Vinyl signing and a short acoustic set. First 50 visitors get a free art print.",
		banner: true, attendees: []string{"follower", "member"}},
	{name: "Synth Patch Swap", typ: "OTHER", loc: "Community Discord", start: -3 * day, length: 2 * time.Hour,
		desc: "Share your favourite patches and learn how others build their sounds."},
	// Ongoing (start before now, end after now).
	{name: "Studio Open Hours", typ: "LIVESTREAM", loc: "Twitch", start: -1 * time.Hour, length: 3 * time.Hour,
		desc:     "Watch a new song take shape in real time. Ask questions in chat; requests welcome.",
		featured: true, official: true, banner: true, attendees: []string{"subscriber", "moderator", "jonah"}},
	{name: "Indie Music Makers Summit", typ: "CONFERENCE", loc: "Pioneer Hall, Seattle", start: -2 * day, length: 4 * day,
		desc:   "Four days of talks and workshops on releasing music independently. Luna speaks on day three about artwork and branding.",
		banner: true, extra: 1, attendees: []string{"admin", "follower"}},
	// Upcoming.
	{name: "Subscriber Listening Party", typ: "LIVESTREAM", loc: "Members-only stream", start: 2*day + 19*time.Hour, length: 90 * time.Minute,
		desc:     "First listen of three unreleased demos, then a vote on which one becomes the next single.",
		featured: true, official: true, banner: true, attendees: []string{"subscriber", "aria"}},
	{name: "Songwriting Workshop: Hooks", typ: "CLASS", loc: "Online (Zoom)", start: 5*day + 18*time.Hour, length: 2 * time.Hour,
		desc: "Bring a half-finished song. We will work on melodies that stick.", attendees: []string{"jonah"}},
	{name: "Sketch & Synth Meetup", typ: "MEETUP", loc: "The Lantern Cafe, Portland", start: 10*day + 18*time.Hour, length: 2 * time.Hour,
		desc: "Drawing, headphones and good coffee. All skill levels welcome.", banner: true, extra: 1},
	{name: "Summer Tour Kick-off", typ: "OTHER", loc: "Crystal Ballroom, Portland", start: 21*day + 20*time.Hour, length: 3 * time.Hour,
		desc:     "The first night of the summer tour, with special guests. Tickets are in the store.",
		featured: true, official: true, attendees: []string{"subscriber", "follower", "member", "admin"}},
}

func (s *seeder) demoEvents(ctx context.Context, app *store.App) error {
	creator := s.user("creator")
	for _, e := range demoEvents {
		ev, err := s.createEvent(ctx, app.ID, creator.ID, e)
		if err != nil {
			return err
		}
		for _, name := range e.attendees {
			a := &store.Attendee{ID: store.NewID(), AppID: app.ID, EventID: ev.ID, UserID: s.user(name).ID,
				Role: "ATTENDEE", CreatedAt: ev.CreatedAt.Add(time.Hour)}
			if err := s.insert(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// createEvent inserts the event, its pictures and the creator's HOST row.
func (s *seeder) createEvent(ctx context.Context, appID, creatorID string, e eventSpec) (*store.Event, error) {
	start := s.now.Add(e.start)
	// Events are announced a while ahead; never "created" in the future.
	created := start.Add(-14 * day)
	if created.After(s.now) {
		created = s.now.Add(-time.Hour)
	}
	ev := &store.Event{ID: store.NewID(), AppID: appID, CreatorID: creatorID, Name: e.name, Description: e.desc,
		Location: e.loc, StartDate: start, EndDate: start.Add(e.length), Type: e.typ,
		IsFeatured: e.featured, IsOfficial: e.official, CreatedAt: created, UpdatedAt: created}
	if e.banner {
		id, err := s.image(ctx, appID, creatorID, kindEventBanner, "event-banner.jpg")
		if err != nil {
			return nil, err
		}
		ev.BannerMediaID = &id
	}
	if err := s.insert(ctx, ev); err != nil {
		return nil, err
	}
	for i := 0; i < e.extra; i++ {
		id, err := s.image(ctx, appID, creatorID, kindEventMedia, "event-photo.jpg")
		if err != nil {
			return nil, err
		}
		if err := s.insert(ctx, &store.EventMedia{EventID: ev.ID, MediaID: id, AppID: appID, Position: i}); err != nil {
			return nil, err
		}
	}
	host := &store.Attendee{ID: store.NewID(), AppID: appID, EventID: ev.ID, UserID: creatorID, Role: "HOST", CreatedAt: created}
	if err := s.insert(ctx, host); err != nil {
		return nil, err
	}
	return ev, nil
}
