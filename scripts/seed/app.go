package seed

import (
	"context"
	"time"

	"marquee/store"
)

// demoBio is creator-supplied HTML. The <script> and the onclick attribute
// are there on purpose: the renderer must strip them, and tests prove it.
const demoBio = `<p>Hi, I'm <strong>Luna Vale</strong>: I write dreamy synth-pop at night and paint the covers by day.
This is the home of the <em>Demo Studio</em> community, where works in progress, tour news and the occasional
cat photo land first.</p>
<p>New album <strong>Midnight Bloom</strong> is out now. Grab the vinyl in the store or
<a href="https://www.youtube.com/@demostudio" onclick="alert('gotcha')">watch the live session</a>.</p>
<script>alert('this must never run')</script>
<p>Subscribers get stems, early demos and a monthly listening party. Thank you for being here.</p>`

func demoSettings() store.AppSettings {
	st := store.DefaultSettings("Demo Studio")
	st.Basic.MetaDescription = "Luna Vale's studio: synth-pop, cover art, live sessions and a friendly community."
	st.Basic.Keywords = "synth-pop, music, illustration, vinyl, live sessions"
	st.LandingPage.ShowLinkInBio = true
	// A new member finds $50.00 in their wallet, enough to try a purchase
	// (README: Try a purchase in the demo).
	st.Wallet.WelcomeCredit = DemoWelcomeCredit
	f := &st.Features
	f.Community.Enabled = true
	f.Community.Name = "The Night Shift"
	f.Community.Description = "Works in progress, listening notes and art from Luna and the community."
	// SUBSCRIBER and up may post, so several roles show up in the feed.
	f.Community.Settings.ContentSettings.CreatePermission = store.RoleSubscriber
	f.Community.Settings.AllowReactions = true
	f.Community.Settings.AllowSharing = true
	f.Community.Settings.AllowReporting = true
	f.Community.Settings.AllowComments = true
	f.Store.Enabled = true
	f.Events.Enabled = true
	f.Events.Settings.ContentSettings.CreatePermission = store.RoleCreator
	f.Chat.Enabled = true
	f.Donations.Enabled = true
	f.Donations.Settings.SuggestedAmounts = []int64{500, 1000, 2500}
	f.Links.Enabled = true
	f.Links.Settings.Layout = "grid"
	f.SubscriptionGating.Enabled = true
	f.SubscriptionGating.Settings.Required = false
	f.SubscriptionGating.Settings.Description = "Join the Studio Circle for stems, early demos and monthly listening parties."
	return st
}

func (s *seeder) createDemoApp(ctx context.Context) (*store.App, error) {
	creator := s.user("creator")
	app := &store.App{ID: store.NewID(), Name: DemoAppName, Status: "PUBLIC", Version: "1.0.0",
		Description: "Synth-pop, cover art and live sessions from Luna Vale.",
		Bio:         demoBio, CreatorID: creator.ID, Settings: demoSettings(),
		CreatedAt: s.now.AddDate(0, -6, 0), UpdatedAt: s.now}
	if err := s.insert(ctx, app); err != nil {
		return nil, err
	}
	rows := []any{
		&store.Community{ID: store.NewID(), AppID: app.ID, Name: "The Night Shift",
			Description: "Works in progress, listening notes and art.", CreatedAt: app.CreatedAt},
		&store.Shop{ID: store.NewID(), AppID: app.ID, Name: "Demo Studio Shop", Currency: "USD", CreatedAt: app.CreatedAt},
	}
	for i, su := range demoUsers {
		if su.role == "" {
			continue
		}
		rows = append(rows, &store.Membership{ID: store.NewID(), AppID: app.ID, UserID: s.user(su.username).ID,
			Role: su.role, CreatedAt: app.CreatedAt.AddDate(0, 0, i)})
	}
	links := []store.Link{
		{Title: "Live sessions on YouTube", URL: "https://www.youtube.com/@demostudio", Icon: "youtube", Enabled: true},
		{Title: "Synth patches on GitHub", URL: "https://github.com/demo-studio/synth-patches", Icon: "github", Enabled: true},
		{Title: "Monthly newsletter", URL: "https://example.com/newsletter", Icon: "mail", Enabled: true},
		// Disabled links must not be shown (SPEC.md section 5).
		{Title: "Old SoundCloud (retired)", URL: "https://soundcloud.com/demo-studio", Icon: "music", Enabled: false},
	}
	for i := range links {
		l := links[i]
		l.ID, l.AppID, l.Position = store.NewID(), app.ID, i
		rows = append(rows, &l)
	}
	tiers := []store.DonationTier{
		{Name: "Bronze", RequiredAmount: 500, Description: "A coffee for the late-night sessions."},
		{Name: "Silver", RequiredAmount: 2500, Description: "Your name in the liner notes of the next EP."},
		{Name: "Gold", RequiredAmount: 10000, Description: "A hand-signed print and a shout-out on the next livestream."},
	}
	for i := range tiers {
		t := tiers[i]
		t.ID, t.AppID, t.Position = store.NewID(), app.ID, i
		rows = append(rows, &t)
	}
	if err := s.insert(ctx, rows...); err != nil {
		return nil, err
	}

	// Pictures need the app row (media.app_id references it).
	banner, err := s.image(ctx, app.ID, creator.ID, kindBanner, "banner.jpg")
	if err != nil {
		return nil, err
	}
	title, err := s.image(ctx, app.ID, creator.ID, kindTitle, "title.png")
	if err != nil {
		return nil, err
	}
	app.BannerMediaID, app.TitleMediaID = &banner, &title
	if _, err := s.tx.NewUpdate().Model(app).Column("banner_media_id", "title_media_id").WherePK().Exec(ctx); err != nil {
		return nil, err
	}
	for _, name := range []string{"creator", "aria", "jonah"} {
		if err := s.setProfilePicture(ctx, app.ID, name); err != nil {
			return nil, err
		}
	}
	return app, nil
}

// createAcme adds a second, smaller app with another creator and some
// features off, so tenancy (roles and content per app) can be shown.
func (s *seeder) createAcme(ctx context.Context) error {
	if err := s.createUsers(ctx, []seedUser{{"acme", "creator@acme.test", store.RoleCreator}}); err != nil {
		return err
	}
	creator := s.user("acme")
	st := store.DefaultSettings("Acme Makers")
	st.Basic.MetaDescription = "Woodworking and electronics builds from the Acme workshop."
	st.Basic.Keywords = "maker, woodworking, electronics"
	st.Features.Community.Enabled = true
	st.Features.Community.Name = "Workshop"
	st.Features.Events.Enabled = true
	st.Features.Store.Enabled = false
	st.Features.Donations.Enabled = false
	st.Features.Links.Enabled = false
	app := &store.App{ID: store.NewID(), Name: AcmeAppName, Status: "PUBLIC", Version: "1.0.0",
		Description: "Woodworking and electronics builds.", Bio: "<p>We build things in a small workshop and share how.</p>",
		CreatorID: creator.ID, Settings: st, CreatedAt: s.now.AddDate(0, -2, 0), UpdatedAt: s.now}
	community := &store.Community{ID: store.NewID(), AppID: app.ID, Name: "Workshop", CreatedAt: app.CreatedAt}
	// Every app has a store row (as CreateApp makes); the feature flag hides it.
	shop := &store.Shop{ID: store.NewID(), AppID: app.ID, Name: "Acme Shop", Currency: "USD", CreatedAt: app.CreatedAt}
	// admin@demo.test follows acme too: one person, different roles per app.
	rows := []any{app, community, shop,
		&store.Membership{ID: store.NewID(), AppID: app.ID, UserID: creator.ID, Role: store.RoleCreator, CreatedAt: app.CreatedAt},
		&store.Membership{ID: store.NewID(), AppID: app.ID, UserID: s.user("admin").ID, Role: store.RoleFollower, CreatedAt: app.CreatedAt},
	}
	if err := s.insert(ctx, rows...); err != nil {
		return err
	}
	posts := []string{
		"Finished the walnut desk organiser today. Hand-cut dovetails, oil finish, zero screws.",
		"Soldering workshop recap: twelve people built their first synth kit and all twelve made noise!",
		"Question for the group: what's your favourite beginner-friendly microcontroller board?",
	}
	for i, text := range posts {
		at := s.now.Add(-time.Duration(i*3+1) * day)
		m := &store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: community.ID, SenderID: creator.ID,
			Type: store.MessagePost, Content: text, CreatedAt: at, UpdatedAt: at}
		if err := s.insert(ctx, m); err != nil {
			return err
		}
	}
	events := []eventSpec{
		{name: "Open Workshop Night", typ: "MEETUP", loc: "Acme Workshop, Unit 4", start: 3*day + 18*time.Hour, length: 3 * time.Hour,
			desc: "Bring a project, borrow a tool, meet other makers."},
		{name: "Intro to Soldering", typ: "CLASS", loc: "Acme Workshop, Unit 4", start: -10*day + 18*time.Hour, length: 2 * time.Hour,
			desc: "A beginner class: through-hole soldering and a blinking LED kit to take home."},
	}
	for _, e := range events {
		if _, err := s.createEvent(ctx, app.ID, creator.ID, e); err != nil {
			return err
		}
	}
	return nil
}
