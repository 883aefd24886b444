package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// TestStandingIsMembershipAndBan: StandingOf answers what MembershipOf and
// BanOf answer, in one query, for members, strangers, bans by account and
// by e-mail, expired bans, a ban beside a silence, and an empty e-mail.
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

		for _, u := range []*store.User{member, creator, stranger, silenced, twice, byEmail, expired} {
			for _, email := range []string{u.Email, ""} {
				wantM, err := s.MembershipOf(ctx, app, u.ID)
				if err != nil {
					t.Fatal(err)
				}
				wantB, err := s.BanOf(ctx, app, u.ID, email, now)
				if err != nil {
					t.Fatal(err)
				}
				gotM, gotB, err := s.StandingOf(ctx, app, u.ID, email, now)
				if err != nil {
					t.Fatal(err)
				}
				if (wantM == nil) != (gotM == nil) || wantM != nil && (gotM.ID != wantM.ID || gotM.Role != wantM.Role || gotM.UserID != wantM.UserID) {
					t.Errorf("%s: membership %+v, want %+v", u.Email, gotM, wantM)
				}
				if (wantB == nil) != (gotB == nil) || wantB != nil && (gotB.ID != wantB.ID || gotB.Kind != wantB.Kind || gotB.Reason != wantB.Reason ||
					(gotB.EndsAt == nil) != (wantB.EndsAt == nil) || gotB.EndsAt != nil && !gotB.EndsAt.Equal(*wantB.EndsAt)) {
					t.Errorf("%s (e-mail %q): ban %+v, want %+v", u.Email, email, gotB, wantB)
				}
			}
		}
		// The cases the table is about, spelled out.
		expect := map[*store.User]string{member: "", stranger: "", silenced: store.BanKindSilence, twice: store.BanKindBan, byEmail: store.BanKindBan, expired: ""}
		for u, kind := range expect {
			m, b, err := s.StandingOf(ctx, app, u.ID, u.Email, now)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if b != nil {
				got = b.Kind
			}
			if got != kind {
				t.Errorf("%s: ban %q, want %q", u.Email, got, kind)
			}
			if u == member && (m == nil || m.Role == "") {
				t.Errorf("member: no membership")
			}
			if u == stranger && m != nil {
				t.Errorf("stranger: membership %+v", m)
			}
		}
	})
}
