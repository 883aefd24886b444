package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Secret holds values the server generates once and keeps (signing keys,
// VAPID keys), so restarts and several processes agree on them.
type Secret struct {
	bun.BaseModel `bun:"table:secrets"`

	Name      string    `bun:",pk"`
	Value     string    `bun:",notnull"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp"`
}

// StoredSecret returns the secret called name, generating it with gen and
// keeping it on first use. When two processes race, the first insert wins
// and both return its value, so every process agrees (VAPID keys: a browser
// subscribed with one public key cannot receive pushes signed by another).
func (s *Storage) StoredSecret(ctx context.Context, name string, gen func() (string, error)) (string, error) {
	return StoredSecret(ctx, s.db, name, gen)
}

// StoredSecret is Storage.StoredSecret before there is a Storage: the
// assembly reads the media signing key, which the store is built with.
func StoredSecret(ctx context.Context, db *bun.DB, name string, gen func() (string, error)) (string, error) {
	var secret Secret
	err := db.NewSelect().Model(&secret).Where("name = ?", name).Scan(ctx)
	if err == nil {
		return secret.Value, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("load secret %s: %w", name, err)
	}
	value, err := gen()
	if err != nil {
		return "", fmt.Errorf("generate secret %s: %w", name, err)
	}
	secret = Secret{Name: name, Value: value}
	if _, err := db.NewInsert().Model(&secret).On("CONFLICT (name) DO NOTHING").Exec(ctx); err != nil {
		return "", fmt.Errorf("store secret %s: %w", name, err)
	}
	if err := db.NewSelect().Model(&secret).Where("name = ?", name).Scan(ctx); err != nil {
		return "", fmt.Errorf("reload secret %s: %w", name, err)
	}
	return secret.Value, nil
}
