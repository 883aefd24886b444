package seed

import (
	"context"
	"time"

	"marquee/store"
)

type postSpec struct {
	by, text string
	tags     []string
}

// demoPosts are listed newest first; post i is about i days old. Lengths vary
// so truncation (26, 100 and 120 characters) shows up in every view.
var demoPosts = []postSpec{
	{"creator", "Tonight's session got weird in the best way: a broken tape delay, a borrowed cello and a melody I can't stop humming. Full clip for subscribers this weekend.", []string{"behindthescenes", "newmusic"}},
	{"subscriber", "Midnight Bloom on repeat during my commute. Track 4 hits different at 7am.", nil},
	{"admin", "Reminder: the listening party is this week. Check Events for the time in your zone.", []string{"events"}},
	{"creator", "Cover sketch for the next single. Still deciding between the moth and the lighthouse.", []string{"art"}},
	{"moderator", "Welcome to everyone who joined this week! Introduce yourself in the comments: what are you listening to right now?", []string{"community"}},
	{"creator", "New patch alert.", []string{"synths"}},
	{"subscriber", "Finally framed my Silver tier print. It glows under the desk lamp exactly like the album art. Photos don't do it justice, but here we are anyway.", []string{"art"}},
	{"creator", "Three-day writing retreat starts tomorrow. Phone off, notebooks out. I'll post a recap when I'm back, promise.", []string{"behindthescenes"}},
	{"admin", "The store restock is live: vinyl, tees and the enamel pin set are back.", []string{"store"}},
	{"creator", "Studio cat has claimed the Juno as a bed. Recording postponed indefinitely.", nil},
	{"moderator", "Quick poll: would you rather see a full live album or a series of stripped-back acoustic versions next year? Reply below, we read every one.", nil},
	{"creator", "Mixing notes: pulled the kick back 2 dB and the whole chorus opened up. Sometimes less really is more.", []string{"behindthescenes", "newmusic"}},
	{"subscriber", "Saw the Portland show last night. That encore!", []string{"tour"}},
	{"creator", "Palette test for the tour poster. Warm dusk colours or cold night blues?", []string{"art", "tour"}},
	{"admin", "Heads up: community guidelines updated. Be kind, credit artists, no spoilers for unreleased tracks.", []string{"community"}},
	{"creator", "Midnight Bloom turns one month old today. Thank you for every stream, every share and every lovely message. I read them all, usually at 3am with tea.", []string{"newmusic"}},
	{"moderator", "Fan art Friday! Post your drawings, remixes and covers with the art tag and we'll feature our favourites on Monday.", []string{"art", "community"}},
	{"creator", "Soundcheck view from the stage.", []string{"tour"}},
	{"subscriber", "Does anyone know which reverb Luna uses on the vocals in Lanterns? Trying to learn.", []string{"synths"}},
	{"creator", "Tour dates are up! Twelve cities, a few tiny venues I've wanted to play forever, and one very big one that still scares me a little.", []string{"tour", "events"}},
	{"admin", "Merch photo shoot done. The hoodies look great in person.", []string{"store"}},
	{"creator", "Morning pages, then synths.", nil},
	{"moderator", "Reminder that the Synth Patch Swap is on Discord this week. Bring your weirdest sounds.", []string{"synths", "events"}},
	{"creator", "Painting the tour backdrop by hand. Eight metres of canvas and one very tired arm.", []string{"art", "tour"}},
	{"subscriber", "The stems from last month's drop were so fun to remix. Mine's a slowed-down lo-fi version, uploading soon.", []string{"newmusic"}},
	{"creator", "Writing lyrics on the train again. Something about lighthouses keeps coming back.", nil},
	{"admin", "Livestream schedule for the month is now in Events.", []string{"events"}},
	{"creator", "Gear corner: this little drum machine is the heartbeat of the whole record.", []string{"synths", "behindthescenes"}},
	{"moderator", "Please use the report button for anything that breaks the guidelines instead of replying to it. Thanks for keeping this place friendly!", []string{"community"}},
	{"creator", "Hello and welcome to The Night Shift! This is where the music starts.", nil},
}

// Posts with a picture, and featured posts (by index in demoPosts).
var (
	postsWithImage = map[int]bool{0: true, 3: true, 6: true, 9: true, 13: true, 17: true, 20: true, 23: true, 24: true, 27: true}
	featuredPosts  = map[int]bool{0: true, 15: true}
)

type replySpec struct {
	post     int
	by, text string
}

var demoReplies = []replySpec{
	{0, "subscriber", "A borrowed cello?! Can't wait to hear it."},
	{0, "aria", "The tape delay wobble is my favourite sound in the world."},
	{0, "creator", "You'll hear it Saturday, I promise."},
	{3, "jonah", "Lighthouse. Definitely the lighthouse."},
	{4, "follower", "Hi all! Currently looping Midnight Bloom, obviously."},
	{15, "moderator", "Happy album month! What a ride."},
}

// hearts gives each post index the users who reacted with a heart.
var hearts = map[int][]string{
	0: {"subscriber", "follower", "aria", "jonah", "admin"}, 1: {"creator"}, 3: {"aria", "jonah", "subscriber"},
	6: {"creator", "moderator"}, 9: {"follower", "subscriber", "aria"}, 15: {"subscriber", "follower", "admin", "moderator"},
	19: {"follower", "jonah"}, 23: {"aria"},
}

type storySpec struct {
	by, caption string
	ago         time.Duration
}

// Stories expire after a day, so they are all from the last 24 hours.
var demoStories = []storySpec{
	{"creator", "Good morning from the studio", 20 * time.Hour},
	{"creator", "Tape machine is warming up", 3 * time.Hour},
	{"aria", "Sketching along to Lanterns", 9 * time.Hour},
	{"aria", "", 2 * time.Hour},
	{"jonah", "Remix in progress", 5 * time.Hour},
}

func (s *seeder) demoCommunity(ctx context.Context, app *store.App) error {
	communityID, err := s.communityID(ctx, app.ID)
	if err != nil {
		return err
	}
	posts := make([]*store.Message, len(demoPosts))
	for i, p := range demoPosts {
		// Spread over the last 30 days; the minutes keep times from looking generated.
		at := s.now.Add(-time.Duration(i)*day - time.Duration(90+i*17%300)*time.Minute)
		m := &store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: communityID, SenderID: s.user(p.by).ID,
			Type: store.MessagePost, Content: p.text, IsFeatured: featuredPosts[i], CreatedAt: at, UpdatedAt: at}
		if err := s.insert(ctx, m); err != nil {
			return err
		}
		posts[i] = m
		for _, name := range p.tags {
			tagID, err := s.tag(ctx, app.ID, name)
			if err != nil {
				return err
			}
			if err := s.insert(ctx, &store.MessageTag{MessageID: m.ID, TagID: tagID, AppID: app.ID}); err != nil {
				return err
			}
		}
		if postsWithImage[i] {
			if err := s.attach(ctx, app.ID, m, kindPost, "post.jpg"); err != nil {
				return err
			}
		}
	}
	for i, r := range demoReplies {
		parent := posts[r.post]
		at := parent.CreatedAt.Add(time.Duration(i+1) * 13 * time.Minute)
		m := &store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: communityID, SenderID: s.user(r.by).ID,
			Type: store.MessageReply, Content: r.text, ParentMessageID: &parent.ID, CreatedAt: at, UpdatedAt: at}
		if err := s.insert(ctx, m); err != nil {
			return err
		}
	}
	for i, names := range hearts {
		for j, name := range names {
			r := &store.Reaction{ID: store.NewID(), AppID: app.ID, MessageID: posts[i].ID, SenderID: s.user(name).ID,
				Reaction: "❤️", CreatedAt: posts[i].CreatedAt.Add(time.Duration(j+1) * 7 * time.Minute)}
			if err := s.insert(ctx, r); err != nil {
				return err
			}
		}
	}
	for _, st := range demoStories {
		at := s.now.Add(-st.ago)
		m := &store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: communityID, SenderID: s.user(st.by).ID,
			Type: store.MessageStory, Content: st.caption, CreatedAt: at, UpdatedAt: at}
		if err := s.insert(ctx, m); err != nil {
			return err
		}
		if err := s.attach(ctx, app.ID, m, kindStory, "story.jpg"); err != nil {
			return err
		}
	}
	return nil
}

// attach makes a picture owned by the message's sender and attaches it.
func (s *seeder) attach(ctx context.Context, appID string, m *store.Message, k imageKind, name string) error {
	id, err := s.image(ctx, appID, m.SenderID, k, name)
	if err != nil {
		return err
	}
	return s.insert(ctx, &store.MessageAttachment{MessageID: m.ID, MediaID: id, AppID: appID})
}
