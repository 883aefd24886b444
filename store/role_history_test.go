package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// 100 concurrent follows and unfollows of one member, with the CLI setting
// roles among them: the role history stays a chain (each line starts from
// the role the one before ended in) and ends in the membership of today,
// on PostgreSQL and SQLite.
func TestRoleHistoryUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		s := seeded(t, db, store.NewMemoryCache())
		ctx := context.Background()
		app, err := s.AppByIDOrName(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		u := &store.User{ID: store.NewID(), Username: "racer", Email: "racer@x.test", PasswordHash: "x"}
		if _, err := db.NewInsert().Model(u).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for i := 0; i < 100; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				var err error
				switch i % 5 {
				case 0, 1:
					_, err = s.Follow(ctx, app.ID, u.ID)
				case 2, 3:
					err = s.Unfollow(ctx, app.ID, u.ID)
				default:
					err = s.SetMemberRole(ctx, app.ID, u.ID, []string{store.RoleModerator, store.RoleFollower, "NONE"}[i%3])
				}
				if err != nil {
					errs <- err
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			// Follow reads the role back after its commit; an unfollow in
			// between leaves nothing to read (its own answer, not the history).
			if !strings.Contains(err.Error(), "membership missing after insert") {
				t.Fatal(err)
			}
		}
		all, err := s.RoleHistory(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		prev := ""
		lines := 0
		for _, c := range all {
			if c.UserID != u.ID {
				continue
			}
			lines++
			if c.Previous != prev || c.Role == c.Previous {
				t.Fatalf("line %d: %q -> %q after %q", lines, c.Previous, c.Role, prev)
			}
			prev = c.Role
		}
		m, err := s.MembershipOf(ctx, app.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		now := ""
		if m != nil {
			now = m.Role
		}
		if lines == 0 || prev != now {
			t.Fatalf("history of %d lines ends in %q, membership is %q", lines, prev, now)
		}
	})
}
