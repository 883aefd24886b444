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

// The one-time code that carries a sign-in to a custom domain, on both
// databases: it works once, for its domain, for a minute; the session it
// makes is linked to the auth host's, and ending either ends both.
func TestDomainSignInCode(t *testing.T) {
	t.Parallel()
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		s := seeded(t, db, store.NewMemoryCache())
		u, err := s.UserByEmail(ctx, "creator@demo.test")
		if err != nil {
			t.Fatal(err)
		}
		app, err := s.AppByIDOrName(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddDomain(ctx, app.ID, "", "fans.example.test", true, nil); err != nil {
			t.Fatal(err)
		}
		auth, err := s.CreateSession(ctx, u.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		code, err := s.CreateDomainSignIn(ctx, auth, "fans.example.test")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := s.ExchangeDomainSignIn(ctx, code, "fans.example.test", "ua")
		if err != nil || tok == "" || tok == auth {
			t.Fatalf("exchange: %q %v", tok, err)
		}
		if got, err := s.SessionUser(ctx, tok); err != nil || got.ID != u.ID {
			t.Fatalf("domain session: %v %v", got, err)
		}
		if _, err := s.ExchangeDomainSignIn(ctx, code, "fans.example.test", "ua"); !errors.Is(err, store.ErrTokenInvalid) {
			t.Errorf("second exchange: %v", err)
		}
		wrong, _ := s.CreateDomainSignIn(ctx, auth, "fans.example.test")
		if _, err := s.ExchangeDomainSignIn(ctx, wrong, "other.example.test", "ua"); !errors.Is(err, store.ErrTokenInvalid) {
			t.Errorf("another domain: %v", err)
		}
		if _, err := s.ExchangeDomainSignIn(ctx, wrong, "fans.example.test", "ua"); !errors.Is(err, store.ErrTokenInvalid) {
			t.Errorf("a code tried on another domain still works: %v", err)
		}
		old, _ := s.CreateDomainSignIn(ctx, auth, "fans.example.test")
		if _, err := db.NewUpdate().Table("domain_sign_ins").Set("expires_at = ?", time.Now().UTC().Add(-time.Second)).Where("1 = 1").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ExchangeDomainSignIn(ctx, old, "fans.example.test", "ua"); !errors.Is(err, store.ErrTokenInvalid) {
			t.Errorf("expired code: %v", err)
		}
		// Signing out of the auth host ends the domain's session too.
		if err := s.DeleteSession(ctx, auth); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SessionUser(ctx, tok); err == nil {
			t.Error("the domain's session outlived the auth host's")
		}
		// And a code made before the sign-out signs nobody in.
		auth2, _ := s.CreateSession(ctx, u.ID, "test")
		late, _ := s.CreateDomainSignIn(ctx, auth2, "fans.example.test")
		if err := s.DeleteSession(ctx, auth2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ExchangeDomainSignIn(ctx, late, "fans.example.test", "ua"); !errors.Is(err, store.ErrTokenInvalid) {
			t.Errorf("code of an ended session: %v", err)
		}
	})
}

// NormalizeDomain keeps host names (lower case, punycode) and refuses the
// rest.
func TestNormalizeDomain(t *testing.T) {
	for in, want := range map[string]string{"Fans.Example.COM.": "fans.example.com", " a-b.example.com ": "a-b.example.com", "bücher.example": "xn--bcher-kva.example"} {
		if got, err := store.NormalizeDomain(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "example", "https://a.example.com", "a.example.com/x", "a.example.com:443", "1.2.3.4", "-a.example.com", "a..example.com", "a_b.example.com", "*.example.com"} {
		if got, err := store.NormalizeDomain(bad); err == nil {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}
