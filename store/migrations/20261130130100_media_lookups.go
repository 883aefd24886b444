package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// Whether a file is restricted (part of a post, story or event that is not
// for everyone) is asked for every media row served (store.mediaRows), by
// media id: the attachment tables' keys lead with the message or event, so
// without these indexes each row scanned the whole table.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "media lookup indexes",
			`CREATE INDEX "message_attachments_media" ON "message_attachments" ("media_id")`,
			`CREATE INDEX "event_media_media" ON "event_media" ("media_id")`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, s := range []string{`DROP INDEX "event_media_media"`, `DROP INDEX "message_attachments_media"`} {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
