package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"marquee/store"
	"marquee/store/storetest"
)

// Session lookups are remembered for SessionMemoTTL, but a logout in this
// process ends the session at once, and another process's logout within
// that time; a new profile picture shows on the next lookup.
func TestSessionMemo(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := store.New(store.Options{DB: db})
		other := store.New(store.Options{DB: db}) // another process
		u, err := s.CreateUser(ctx, "memo@example.test", "memo", "x")
		if err != nil {
			t.Fatal(err)
		}
		token, err := s.CreateSession(ctx, u.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.SessionUser(ctx, token)
		if err != nil || got.ID != u.ID {
			t.Fatalf("lookup: %+v %v", got, err)
		}

		// The copy handed out is the caller's own.
		got.Username = "changed"
		if again, _ := s.SessionUser(ctx, token); again.Username != "memo" {
			t.Fatalf("a caller's change reached the memo: %q", again.Username)
		}

		// A new picture shows at once in the process that set it.
		media := &store.Media{ID: store.NewID(), OwnerID: u.ID, Type: "IMAGE", MimeType: "image/png", Path: "memo/" + u.ID + ".png"}
		if _, err := db.NewInsert().Model(media).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.SetProfilePicture(ctx, u.ID, media.ID); err != nil {
			t.Fatal(err)
		}
		if again, _ := s.SessionUser(ctx, token); again.ProfileMediaID == nil || *again.ProfileMediaID != media.ID {
			t.Fatalf("stale picture after the change: %+v", again.ProfileMediaID)
		}

		// Logout elsewhere: this process notices within the memo's time.
		if err := other.DeleteSession(ctx, token); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(3 * store.SessionMemoTTL)
		for {
			_, err := s.SessionUser(ctx, token)
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a session ended elsewhere still answers after %s: %v", 3*store.SessionMemoTTL, err)
			}
			time.Sleep(50 * time.Millisecond)
		}

		// Logout here: gone on the very next lookup.
		token2, err := s.CreateSession(ctx, u.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SessionUser(ctx, token2); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSession(ctx, token2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SessionUser(ctx, token2); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after logout: %v", err)
		}
	})
}
