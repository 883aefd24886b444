package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// An event's update notices name it as their source ("event:ID"), as its
// announcement does, so a hidden event's notices leave members' lists
// (issue 41 item 9). Notices written before have an empty source: they
// take it from the event their link leads to.
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "event notice sources", `UPDATE notifications SET source = (
	SELECT 'event:' || e.id FROM events AS e
	WHERE e.app_id = notifications.app_id AND notifications.link LIKE ('%/events/' || e.id) LIMIT 1)
WHERE kind = 'EVENT_UPDATE' AND source = '' AND EXISTS (
	SELECT 1 FROM events AS e WHERE e.app_id = notifications.app_id AND notifications.link LIKE ('%/events/' || e.id))`)
	}, func(ctx context.Context, db *bun.DB) error {
		return nil // a source on an update notice is harmless to older code
	})
}
