package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"marquee/store"
)

type table struct {
	model       any
	foreignKeys []string
	indexes     [][]string
}

const cascadeApp = "(app_id) REFERENCES apps (id) ON DELETE CASCADE"

// initialTables lists every entity of SPEC.md section 3 in dependency order.
var initialTables = []table{
	{model: (*store.Secret)(nil)},
	{model: (*store.User)(nil)},
	{model: (*store.App)(nil), foreignKeys: []string{"(creator_id) REFERENCES users (id)"}},
	{model: (*store.Session)(nil), foreignKeys: []string{"(user_id) REFERENCES users (id) ON DELETE CASCADE"}, indexes: [][]string{{"user_id"}}},
	{model: (*store.Membership)(nil), foreignKeys: []string{cascadeApp, "(user_id) REFERENCES users (id) ON DELETE CASCADE"}, indexes: [][]string{{"user_id"}}},
	{model: (*store.Community)(nil), foreignKeys: []string{cascadeApp}},
	{model: (*store.Media)(nil), foreignKeys: []string{cascadeApp, "(owner_id) REFERENCES users (id) ON DELETE CASCADE"}, indexes: [][]string{{"app_id", "created_at"}}},
	{model: (*store.Message)(nil), foreignKeys: []string{cascadeApp, "(community_id) REFERENCES communities (id) ON DELETE CASCADE", "(sender_id) REFERENCES users (id) ON DELETE CASCADE", "(parent_message_id) REFERENCES messages (id) ON DELETE CASCADE"},
		indexes: [][]string{{"community_id", "type", "created_at"}, {"parent_message_id", "created_at"}, {"app_id", "type", "created_at"}}},
	{model: (*store.MessageAttachment)(nil), foreignKeys: []string{cascadeApp, "(message_id) REFERENCES messages (id) ON DELETE CASCADE", "(media_id) REFERENCES media (id) ON DELETE CASCADE"}},
	{model: (*store.Reaction)(nil), foreignKeys: []string{cascadeApp, "(message_id) REFERENCES messages (id) ON DELETE CASCADE", "(sender_id) REFERENCES users (id) ON DELETE CASCADE"}},
	{model: (*store.Tag)(nil), foreignKeys: []string{cascadeApp}},
	{model: (*store.MessageTag)(nil), foreignKeys: []string{cascadeApp, "(message_id) REFERENCES messages (id) ON DELETE CASCADE", "(tag_id) REFERENCES tags (id) ON DELETE CASCADE"}},
	{model: (*store.Store)(nil), foreignKeys: []string{cascadeApp}},
	{model: (*store.StoreItem)(nil), foreignKeys: []string{cascadeApp, "(store_id) REFERENCES stores (id) ON DELETE CASCADE"}, indexes: [][]string{{"store_id", "created_at"}, {"app_id", "is_featured"}}},
	{model: (*store.StoreItemMedia)(nil), foreignKeys: []string{cascadeApp, "(store_item_id) REFERENCES store_items (id) ON DELETE CASCADE", "(media_id) REFERENCES media (id) ON DELETE CASCADE"}},
	{model: (*store.StoreItemTag)(nil), foreignKeys: []string{cascadeApp, "(store_item_id) REFERENCES store_items (id) ON DELETE CASCADE", "(tag_id) REFERENCES tags (id) ON DELETE CASCADE"}},
	{model: (*store.Variant)(nil), foreignKeys: []string{cascadeApp, "(store_item_id) REFERENCES store_items (id) ON DELETE CASCADE"}, indexes: [][]string{{"store_item_id"}}},
	{model: (*store.SubscriptionPlan)(nil), foreignKeys: []string{cascadeApp, "(store_item_id) REFERENCES store_items (id) ON DELETE CASCADE"}},
	{model: (*store.Subscription)(nil), foreignKeys: []string{cascadeApp, "(user_id) REFERENCES users (id) ON DELETE CASCADE", "(plan_id) REFERENCES subscription_plans (id)"}, indexes: [][]string{{"app_id", "user_id"}}},
	{model: (*store.Cart)(nil), foreignKeys: []string{cascadeApp, "(store_id) REFERENCES stores (id) ON DELETE CASCADE", "(user_id) REFERENCES users (id) ON DELETE CASCADE"}, indexes: [][]string{{"store_id", "user_id", "status"}}},
	{model: (*store.CartItem)(nil), foreignKeys: []string{cascadeApp, "(cart_id) REFERENCES carts (id) ON DELETE CASCADE", "(store_item_id) REFERENCES store_items (id) ON DELETE CASCADE", "(variant_id) REFERENCES variants (id) ON DELETE CASCADE"}, indexes: [][]string{{"cart_id"}}},
	{model: (*store.Order)(nil), foreignKeys: []string{cascadeApp, "(store_id) REFERENCES stores (id)", "(user_id) REFERENCES users (id)"}, indexes: [][]string{{"store_id", "user_id", "created_at"}}},
	{model: (*store.OrderItem)(nil), foreignKeys: []string{cascadeApp, "(order_id) REFERENCES orders (id) ON DELETE CASCADE"}, indexes: [][]string{{"order_id"}}},
	{model: (*store.Event)(nil), foreignKeys: []string{cascadeApp, "(creator_id) REFERENCES users (id)"}, indexes: [][]string{{"app_id", "start_date"}}},
	{model: (*store.EventMedia)(nil), foreignKeys: []string{cascadeApp, "(event_id) REFERENCES events (id) ON DELETE CASCADE", "(media_id) REFERENCES media (id) ON DELETE CASCADE"}},
	{model: (*store.Attendee)(nil), foreignKeys: []string{cascadeApp, "(event_id) REFERENCES events (id) ON DELETE CASCADE", "(user_id) REFERENCES users (id) ON DELETE CASCADE"}},
	{model: (*store.Notification)(nil), foreignKeys: []string{cascadeApp, "(user_id) REFERENCES users (id) ON DELETE CASCADE", "(sender_id) REFERENCES users (id) ON DELETE SET NULL"}, indexes: [][]string{{"app_id", "user_id", "created_at"}}},
	{model: (*store.PushSubscription)(nil), foreignKeys: []string{cascadeApp, "(user_id) REFERENCES users (id) ON DELETE CASCADE"}},
	{model: (*store.Donation)(nil), foreignKeys: []string{cascadeApp, "(user_id) REFERENCES users (id)"}},
	{model: (*store.DonationTier)(nil), foreignKeys: []string{cascadeApp}},
	{model: (*store.Link)(nil), foreignKeys: []string{cascadeApp}},
}

func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, t := range initialTables {
				q := tx.NewCreateTable().Model(t.model)
				for _, fk := range t.foreignKeys {
					q = q.ForeignKey(fk)
				}
				if _, err := q.Exec(ctx); err != nil {
					return fmt.Errorf("create table for %T: %w", t.model, err)
				}
				name := tx.Dialect().Tables().Get(modelType(t.model)).Name
				for _, cols := range t.indexes {
					idx := fmt.Sprintf("%s_%s_idx", name, joinCols(cols))
					if _, err := tx.NewCreateIndex().Model(t.model).Index(idx).Column(cols...).Exec(ctx); err != nil {
						return fmt.Errorf("create index %s: %w", idx, err)
					}
				}
			}
			return nil
		})
	}, func(ctx context.Context, db *bun.DB) error {
		for i := len(initialTables) - 1; i >= 0; i-- {
			if _, err := db.NewDropTable().Model(initialTables[i].model).IfExists().Exec(ctx); err != nil {
				return fmt.Errorf("drop table for %T: %w", initialTables[i].model, err)
			}
		}
		return nil
	})
}
