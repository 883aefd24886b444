package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// TestStandingIsMembershipAndBan: StandingOf answers the membership
// MembershipOf answers and the ban in force, in one query, for members,
// strangers, bans by account and by e-mail, expired bans, a ban beside a
// silence, and an empty e-mail.
func TestStandingIsMembershipAndBan(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := seeded(t, db, store.NewMemoryCache())
		landing, err := s.Landing(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		app := landing.ID
		user := func(email string) *store.User {
			u, err := s.UserByEmail(ctx, email)
			if err != nil {
				u, err = s.CreateUser(ctx, email, "u"+store.NewID()[:8], "x")
			}
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		member, creator := user("member@demo.test"), user("creator@demo.test")
		stranger, silenced, twice := user("stranger@standing.test"), user("silenced@standing.test"), user("twice@standing.test")
		byEmail, expired := user("Mailed@Standing.test"), user("expired@standing.test")
		if _, err := s.Follow(ctx, app, member.ID); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		past, future := now.Add(-time.Hour), now.Add(time.Hour)
		ban := func(userID, email, kind string, ends *time.Time) {
			b := &store.Ban{ID: store.NewID(), AppID: app, UserID: userID, Email: email, Kind: kind, Reason: "because " + kind,
				EndsAt: ends, CreatedBy: creator.ID, CreatedAt: now}
			if _, err := db.NewInsert().Model(b).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		ban(silenced.ID, "", store.BanKindSilence, &future)
		ban(twice.ID, "", store.BanKindSilence, nil)
		ban("gone-"+store.NewID(), "twice@standing.test", store.BanKindBan, nil)
		ban("gone-"+store.NewID(), "mailed@standing.test", store.BanKindBan, &future)
		ban(expired.ID, "", store.BanKindBan, &past)
		// A ban row with no e-mail must not match a viewer with none.
		ban("gone-"+store.NewID(), "", store.BanKindBan, nil)

		// The ban in force for each viewer, matched with their e-mail and
		// without it (BanOf is StandingOf's ban, so the kinds are spelled
		// out here rather than compared with it).
		expect := []struct {
			u                 *store.User
			withEmail, noMail string
		}{
			{member, "", ""}, {creator, "", ""}, {stranger, "", ""}, {expired, "", ""},
			{silenced, store.BanKindSilence, store.BanKindSilence},
			{twice, store.BanKindBan, store.BanKindSilence},
			{byEmail, store.BanKindBan, ""},
		}
		for _, e := range expect {
			for email, kind := range map[string]string{e.u.Email: e.withEmail, "": e.noMail} {
				wantM, err := s.MembershipOf(ctx, app, e.u.ID)
				if err != nil {
					t.Fatal(err)
				}
				gotM, gotB, err := s.StandingOf(ctx, app, e.u.ID, email, now)
				if err != nil {
					t.Fatal(err)
				}
				if (wantM == nil) != (gotM == nil) || wantM != nil && (gotM.ID != wantM.ID || gotM.Role != wantM.Role || gotM.UserID != wantM.UserID) {
					t.Errorf("%s: membership %+v, want %+v", e.u.Email, gotM, wantM)
				}
				got := ""
				if gotB != nil {
					got = gotB.Kind
					if gotB.Reason != "because "+got || gotB.AppID != app {
						t.Errorf("%s (e-mail %q): ban %+v", e.u.Email, email, gotB)
					}
				}
				if got != kind {
					t.Errorf("%s (e-mail %q): ban %q, want %q", e.u.Email, email, got, kind)
				}
			}
		}
		if m, _, _ := s.StandingOf(ctx, app, member.ID, member.Email, now); m == nil || m.Role == "" {
			t.Errorf("member: no membership")
		}
		if m, _, _ := s.StandingOf(ctx, app, stranger.ID, stranger.Email, now); m != nil {
			t.Errorf("stranger: membership %+v", m)
		}
		if b, err := s.BanOf(ctx, app, byEmail.ID, byEmail.Email, now); err != nil || b == nil || b.Kind != store.BanKindBan {
			t.Errorf("BanOf by e-mail: %+v (%v)", b, err)
		}
	})
}
