package migrations

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
)

// Certificates for custom domains (issue 42 item 4): with TLS_ACME=true
// the server obtains them itself, and keeps them here (certmagic's storage:
// a key, its bytes and when it was written) so every instance serves the
// certificate one of them obtained. acme_locks are certmagic's named locks
// (one instance obtains a name's certificate at a time); a lock whose
// holder stopped renewing it expires.
// blobOnly is the translation for SQLite this migration was committed
// with: its BIGINT columns stayed BIGINT there (the same 64-bit INTEGER
// affinity on SQLite).
var blobOnly = strings.NewReplacer(" BYTEA", " BLOB")

func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execTranslated(ctx, db, "acme storage migration", blobOnly,
			`CREATE TABLE "acme_storage" (
				"key" VARCHAR NOT NULL PRIMARY KEY,
				"value" BYTEA NOT NULL,
				"modified" BIGINT NOT NULL
			)`,
			`CREATE TABLE "acme_locks" (
				"name" VARCHAR NOT NULL PRIMARY KEY,
				"owner" VARCHAR NOT NULL,
				"expires" BIGINT NOT NULL
			)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{`DROP TABLE "acme_locks"`, `DROP TABLE "acme_storage"`} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
