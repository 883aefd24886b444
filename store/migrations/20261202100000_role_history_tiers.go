package migrations

import (
	"context"

	"github.com/uptrace/bun"
)

// The role history remembers the paid tier (issue 40 item 6: paid members
// by tier over time, churn): role_changes.tier_id is the tier the member
// paid for after the change (” when not paying: a follower, a gift, a
// free trial). A line is written whenever the role or the paid tier
// changes. Existing histories get the tier each paying member holds now on
// their last line (what is known; earlier tiers were not recorded).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "role history tiers migration",
			`ALTER TABLE "role_changes" ADD COLUMN "tier_id" VARCHAR NOT NULL DEFAULT ''`,
			`UPDATE "role_changes" SET "tier_id" = COALESCE((SELECT s.plan_id FROM subscriptions AS s
				WHERE s.app_id = role_changes.app_id AND s.user_id = role_changes.user_id AND s.status IN ('ACTIVE', 'PAST_DUE')
				AND s.amount > 0 AND s.provider <> 'COMP' AND s.trial_until IS NULL LIMIT 1), '')
			WHERE "role" <> '' AND "id" = (SELECT c.id FROM role_changes AS c WHERE c.app_id = role_changes.app_id
				AND c.user_id = role_changes.user_id ORDER BY c.created_at DESC, c.id DESC LIMIT 1)`,
		)
	}, func(ctx context.Context, db *bun.DB) error {
		_, err := db.ExecContext(ctx, `ALTER TABLE "role_changes" DROP COLUMN "tier_id"`)
		return err
	})
}
