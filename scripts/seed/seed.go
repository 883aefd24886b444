// Package seed fills a database with the demo data the README promises: the
// app "demo" with every feature switched on and realistic content, and a
// second app "acme" that shows tenancy.
package seed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"marquee/server/auth"
	"marquee/server/media"
	"marquee/store"
)

// DemoPassword is the password of every seeded user.
const DemoPassword = "demo-password"

// DemoAppName and AcmeAppName are the seeded apps.
const (
	DemoAppName = "demo"
	AcmeAppName = "acme"
)

// day keeps the relative dates below readable.
const day = 24 * time.Hour

// seeder carries what every step needs; one value lives for one Demo call.
type seeder struct {
	tx      bun.Tx
	storage media.Storage
	now     time.Time
	hash    string
	users   map[string]*store.User // by username
	tags    map[string]string      // appID+"/"+name -> tag id
	images  int                    // counts pictures so each one looks different
}

// Demo creates the demo data in one transaction. If the app "demo" already
// exists it changes nothing, so running it at every start is safe.
//
// Image bytes are written to storage before the transaction commits; if the
// transaction fails they are left behind as unreferenced files, which is
// harmless and cheaper than a second pass.
func Demo(ctx context.Context, db *bun.DB, storage media.Storage) error {
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		exists, err := tx.NewSelect().Model((*store.App)(nil)).Where("name = ?", DemoAppName).Exists(ctx)
		if err != nil {
			return fmt.Errorf("check demo app: %w", err)
		}
		if exists {
			return errSeeded
		}
		// Hashing is deliberately slow, so one hash serves every user.
		hash, err := auth.HashPassword(DemoPassword)
		if err != nil {
			return err
		}
		s := &seeder{tx: tx, storage: storage, now: time.Now().UTC().Truncate(time.Second), hash: hash,
			users: map[string]*store.User{}, tags: map[string]string{}}
		return s.run(ctx)
	})
	if errors.Is(err, errSeeded) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("seed demo: %w", err)
	}
	return nil
}

// errSeeded ends the transaction early without writing anything.
var errSeeded = errors.New("already seeded")

func (s *seeder) run(ctx context.Context) error {
	if err := s.createUsers(ctx, demoUsers); err != nil {
		return err
	}
	demo, err := s.createDemoApp(ctx)
	if err != nil {
		return err
	}
	if err := store.RecordJoins(ctx, s.tx, demo.ID); err != nil {
		return err
	}
	if err := s.demoCommunity(ctx, demo); err != nil {
		return err
	}
	if err := s.demoEvents(ctx, demo); err != nil {
		return err
	}
	if err := s.demoStore(ctx, demo); err != nil {
		return err
	}
	if err := s.demoWallets(ctx, demo); err != nil {
		return err
	}
	if err := s.createAcme(ctx); err != nil {
		return err
	}
	// The memberships written above join the role history at their dates.
	var apps []string
	if err := s.tx.NewSelect().Model((*store.App)(nil)).Column("id").Scan(ctx, &apps); err != nil {
		return fmt.Errorf("list apps: %w", err)
	}
	for _, id := range apps {
		if err := store.RecordJoins(ctx, s.tx, id); err != nil {
			return err
		}
	}
	return nil
}

// insert writes rows one by one and names the failing row type in the error.
func (s *seeder) insert(ctx context.Context, rows ...any) error {
	for _, row := range rows {
		if _, err := s.tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return fmt.Errorf("insert %T: %w", row, err)
		}
	}
	return nil
}

// tag returns the id of the app's tag called name, creating it once.
func (s *seeder) tag(ctx context.Context, appID, name string) (string, error) {
	if id, ok := s.tags[appID+"/"+name]; ok {
		return id, nil
	}
	t := &store.Tag{ID: store.NewID(), AppID: appID, Name: name}
	if err := s.insert(ctx, t); err != nil {
		return "", err
	}
	s.tags[appID+"/"+name] = t.ID
	return t.ID, nil
}

func (s *seeder) user(name string) *store.User {
	u, ok := s.users[name]
	if !ok {
		panic("seed: unknown user " + name) // a typo in the tables below
	}
	return u
}

// community loads the app's community id (created with the app).
func (s *seeder) communityID(ctx context.Context, appID string) (string, error) {
	var id string
	err := s.tx.NewSelect().Model((*store.Community)(nil)).Column("id").Where("app_id = ?", appID).Scan(ctx, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("community of app %s missing", appID)
	}
	return id, err
}

func ptr[T any](v T) *T { return &v }
