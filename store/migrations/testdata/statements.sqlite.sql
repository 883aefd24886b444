-- 20261121000001_initial
CREATE TABLE "secrets" (
		"name" VARCHAR NOT NULL,
		"value" VARCHAR NOT NULL,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("name")
	);
CREATE TABLE "users" (
		"id" VARCHAR NOT NULL,
		"username" VARCHAR NOT NULL,
		"email" VARCHAR NOT NULL,
		"email_verified" BOOLEAN NOT NULL DEFAULT false,
		"password_hash" VARCHAR NOT NULL,
		"profile_media_id" VARCHAR,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("username"),
		UNIQUE ("email")
	);
CREATE TABLE "apps" (
		"id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"status" VARCHAR NOT NULL DEFAULT 'PUBLIC',
		"version" VARCHAR NOT NULL DEFAULT '1.0.0',
		"description" VARCHAR NOT NULL DEFAULT '',
		"bio" VARCHAR NOT NULL DEFAULT '',
		"creator_id" VARCHAR NOT NULL,
		"banner_media_id" VARCHAR,
		"title_media_id" VARCHAR,
		"logo_media_id" VARCHAR,
		"splash_media_id" VARCHAR,
		"settings" text NOT NULL,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("name"),
		FOREIGN KEY (creator_id) REFERENCES users (id)
	);
CREATE TABLE "sessions" (
		"id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"user_agent" VARCHAR NOT NULL DEFAULT '',
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"expires_at" TIMESTAMP NOT NULL,
		PRIMARY KEY ("id"),
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	);
CREATE INDEX "sessions_user_id_idx" ON "sessions" ("user_id");
CREATE TABLE "memberships" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"role" VARCHAR NOT NULL,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		CONSTRAINT "membership_app_user" UNIQUE ("app_id", "user_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	);
CREATE INDEX "memberships_user_id_idx" ON "memberships" ("user_id");
CREATE TABLE "communities" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL DEFAULT '',
		"description" VARCHAR NOT NULL DEFAULT '',
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("app_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	);
CREATE TABLE "media" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR,
		"owner_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL DEFAULT '',
		"type" VARCHAR NOT NULL,
		"size" INTEGER NOT NULL DEFAULT 0,
		"mime_type" VARCHAR NOT NULL,
		"path" VARCHAR NOT NULL,
		"description" VARCHAR NOT NULL DEFAULT '',
		"media_key" VARCHAR NOT NULL DEFAULT '',
		"status" VARCHAR NOT NULL DEFAULT 'PENDING',
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("path"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (owner_id) REFERENCES users (id) ON DELETE CASCADE
	);
CREATE INDEX "media_app_id_created_at_idx" ON "media" ("app_id", "created_at");
CREATE TABLE "messages" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"community_id" VARCHAR NOT NULL,
		"sender_id" VARCHAR NOT NULL,
		"type" VARCHAR NOT NULL,
		"content" VARCHAR NOT NULL DEFAULT '',
		"parent_message_id" VARCHAR,
		"is_featured" BOOLEAN NOT NULL DEFAULT false,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (community_id) REFERENCES communities (id) ON DELETE CASCADE,
		FOREIGN KEY (sender_id) REFERENCES users (id) ON DELETE CASCADE,
		FOREIGN KEY (parent_message_id) REFERENCES messages (id) ON DELETE CASCADE
	);
CREATE INDEX "messages_community_id_type_created_at_idx" ON "messages" ("community_id", "type", "created_at");
CREATE INDEX "messages_parent_message_id_created_at_idx" ON "messages" ("parent_message_id", "created_at");
CREATE INDEX "messages_app_id_type_created_at_idx" ON "messages" ("app_id", "type", "created_at");
CREATE TABLE "message_attachments" (
		"message_id" VARCHAR NOT NULL,
		"media_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"position" INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY ("message_id", "media_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE,
		FOREIGN KEY (media_id) REFERENCES media (id) ON DELETE CASCADE
	);
CREATE TABLE "reactions" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"message_id" VARCHAR NOT NULL,
		"sender_id" VARCHAR NOT NULL,
		"reaction" VARCHAR NOT NULL,
		"media_id" VARCHAR,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		CONSTRAINT "reaction_once" UNIQUE ("message_id", "sender_id", "reaction"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE,
		FOREIGN KEY (sender_id) REFERENCES users (id) ON DELETE CASCADE
	);
CREATE TABLE "tags" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		PRIMARY KEY ("id"),
		CONSTRAINT "tag_app_name" UNIQUE ("app_id", "name"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	);
CREATE TABLE "message_tags" (
		"message_id" VARCHAR NOT NULL,
		"tag_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		PRIMARY KEY ("message_id", "tag_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE,
		FOREIGN KEY (tag_id) REFERENCES tags (id) ON DELETE CASCADE
	);
CREATE TABLE "stores" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL DEFAULT '',
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("app_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	);
CREATE TABLE "store_items" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"description" VARCHAR NOT NULL DEFAULT '',
		"type" VARCHAR NOT NULL,
		"price" INTEGER NOT NULL,
		"compare_price" INTEGER,
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"stock" INTEGER,
		"sku" VARCHAR NOT NULL DEFAULT '',
		"is_featured" BOOLEAN NOT NULL DEFAULT false,
		"settings" VARCHAR NOT NULL DEFAULT '{}',
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_id) REFERENCES stores (id) ON DELETE CASCADE
	);
CREATE INDEX "store_items_store_id_created_at_idx" ON "store_items" ("store_id", "created_at");
CREATE INDEX "store_items_app_id_is_featured_idx" ON "store_items" ("app_id", "is_featured");
CREATE TABLE "store_item_media" (
		"store_item_id" VARCHAR NOT NULL,
		"media_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"position" INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY ("store_item_id", "media_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE,
		FOREIGN KEY (media_id) REFERENCES media (id) ON DELETE CASCADE
	);
CREATE TABLE "store_item_tags" (
		"store_item_id" VARCHAR NOT NULL,
		"tag_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		PRIMARY KEY ("store_item_id", "tag_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE,
		FOREIGN KEY (tag_id) REFERENCES tags (id) ON DELETE CASCADE
	);
CREATE TABLE "variants" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_item_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"value" VARCHAR NOT NULL,
		"price_adjustment" INTEGER NOT NULL DEFAULT 0,
		"stock" INTEGER,
		"position" INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
	);
CREATE INDEX "variants_store_item_id_idx" ON "variants" ("store_item_id");
CREATE TABLE "subscription_plans" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_item_id" VARCHAR NOT NULL,
		"billing_cycle" VARCHAR NOT NULL,
		PRIMARY KEY ("id"),
		UNIQUE ("store_item_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
	);
CREATE TABLE "subscriptions" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"plan_id" VARCHAR NOT NULL,
		"status" VARCHAR NOT NULL,
		"current_period_end" TIMESTAMP NOT NULL,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
		FOREIGN KEY (plan_id) REFERENCES subscription_plans (id)
	);
CREATE INDEX "subscriptions_app_id_user_id_idx" ON "subscriptions" ("app_id", "user_id");
CREATE TABLE "carts" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"status" VARCHAR NOT NULL DEFAULT 'ACTIVE',
		"expires_at" TIMESTAMP NOT NULL,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_id) REFERENCES stores (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	);
CREATE INDEX "carts_store_id_user_id_status_idx" ON "carts" ("store_id", "user_id", "status");
CREATE TABLE "cart_items" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"cart_id" VARCHAR NOT NULL,
		"store_item_id" VARCHAR NOT NULL,
		"variant_id" VARCHAR,
		"quantity" INTEGER NOT NULL,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (cart_id) REFERENCES carts (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE,
		FOREIGN KEY (variant_id) REFERENCES variants (id) ON DELETE CASCADE
	);
CREATE INDEX "cart_items_cart_id_idx" ON "cart_items" ("cart_id");
CREATE TABLE "orders" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"order_number" VARCHAR NOT NULL,
		"status" VARCHAR NOT NULL,
		"subtotal" INTEGER NOT NULL,
		"platform_fee" INTEGER NOT NULL DEFAULT 0,
		"total" INTEGER NOT NULL,
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"payment_method" VARCHAR NOT NULL DEFAULT '',
		"payment_ref" VARCHAR NOT NULL DEFAULT '',
		"shipping_address" VARCHAR NOT NULL DEFAULT '',
		"notes" VARCHAR NOT NULL DEFAULT '',
		"tracking_number" VARCHAR NOT NULL DEFAULT '',
		"refund_reason" VARCHAR NOT NULL DEFAULT '',
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"shipped_at" TIMESTAMP,
		"delivered_at" TIMESTAMP,
		"cancelled_at" TIMESTAMP,
		"refunded_at" TIMESTAMP,
		PRIMARY KEY ("id"),
		UNIQUE ("order_number"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_id) REFERENCES stores (id),
		FOREIGN KEY (user_id) REFERENCES users (id)
	);
CREATE INDEX "orders_store_id_user_id_created_at_idx" ON "orders" ("store_id", "user_id", "created_at");
CREATE TABLE "order_items" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"order_id" VARCHAR NOT NULL,
		"store_item_id" VARCHAR NOT NULL,
		"variant_id" VARCHAR,
		"name" VARCHAR NOT NULL,
		"type" VARCHAR NOT NULL,
		"quantity" INTEGER NOT NULL,
		"price" INTEGER NOT NULL,
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"custom_options" VARCHAR NOT NULL DEFAULT '{}',
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE
	);
CREATE INDEX "order_items_order_id_idx" ON "order_items" ("order_id");
CREATE TABLE "events" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"creator_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"description" VARCHAR NOT NULL DEFAULT '',
		"location" VARCHAR NOT NULL DEFAULT '',
		"start_date" TIMESTAMP NOT NULL,
		"end_date" TIMESTAMP NOT NULL,
		"type" VARCHAR NOT NULL DEFAULT 'MEETUP',
		"is_featured" BOOLEAN NOT NULL DEFAULT false,
		"is_official" BOOLEAN NOT NULL DEFAULT false,
		"banner_media_id" VARCHAR,
		"settings" VARCHAR NOT NULL DEFAULT '{}',
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (creator_id) REFERENCES users (id)
	);
CREATE INDEX "events_app_id_start_date_idx" ON "events" ("app_id", "start_date");
CREATE TABLE "event_media" (
		"event_id" VARCHAR NOT NULL,
		"media_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"position" INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY ("event_id", "media_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE,
		FOREIGN KEY (media_id) REFERENCES media (id) ON DELETE CASCADE
	);
CREATE TABLE "attendees" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"event_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"role" VARCHAR NOT NULL,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		CONSTRAINT "attendee_event_user" UNIQUE ("event_id", "user_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	);
CREATE TABLE "notifications" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"sender_id" VARCHAR,
		"content" VARCHAR NOT NULL,
		"read_at" TIMESTAMP,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
		FOREIGN KEY (sender_id) REFERENCES users (id) ON DELETE SET NULL
	);
CREATE INDEX "notifications_app_id_user_id_created_at_idx" ON "notifications" ("app_id", "user_id", "created_at");
CREATE TABLE "push_subscriptions" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"endpoint" VARCHAR NOT NULL,
		"p256dh" VARCHAR NOT NULL,
		"auth" VARCHAR NOT NULL,
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		CONSTRAINT "push_app_endpoint" UNIQUE ("app_id", "endpoint"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	);
CREATE TABLE "donations" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"amount" INTEGER NOT NULL,
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"message" VARCHAR NOT NULL DEFAULT '',
		"status" VARCHAR NOT NULL DEFAULT 'PENDING',
		"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
		"processed_at" TIMESTAMP,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id)
	);
CREATE TABLE "donation_tiers" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"required_amount" INTEGER NOT NULL,
		"description" VARCHAR NOT NULL DEFAULT '',
		"position" INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	);
CREATE TABLE "links" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"title" VARCHAR NOT NULL,
		"url" VARCHAR NOT NULL,
		"icon" VARCHAR NOT NULL DEFAULT '',
		"enabled" BOOLEAN NOT NULL,
		"position" INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	);

-- 20261123000001_store_cart
ALTER TABLE "store_items" ADD COLUMN "deleted_at" TIMESTAMP;
CREATE UNIQUE INDEX "carts_one_active_idx" ON "carts" ("store_id", "user_id") WHERE status = 'ACTIVE';

-- 20261123000002_variants_deleted_at
ALTER TABLE "variants" ADD COLUMN "deleted_at" TIMESTAMP;

-- 20261123001400_page_versions
CREATE TABLE "page_versions" ("scope" VARCHAR NOT NULL, "version" INTEGER NOT NULL DEFAULT 0, PRIMARY KEY ("scope"));

-- 20261123100000_job_outbox
CREATE TABLE "job_outbox" (
			"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
			"kind" VARCHAR NOT NULL,
			"args" VARCHAR NOT NULL,
			"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp
		);

-- 20261123100001_notifications
ALTER TABLE "notifications" ADD COLUMN "kind" VARCHAR NOT NULL DEFAULT 'SYSTEM';
ALTER TABLE "notifications" ADD COLUMN "link" VARCHAR NOT NULL DEFAULT '';
ALTER TABLE "notifications" ADD COLUMN "source" VARCHAR NOT NULL DEFAULT '';
CREATE INDEX "notifications_source_idx" ON "notifications" ("app_id", "source");
CREATE INDEX "notifications_unread_idx" ON "notifications" ("app_id", "user_id", "created_at") WHERE read_at IS NULL;
CREATE TABLE "notification_preferences" (
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"muted_all" BOOLEAN NOT NULL DEFAULT FALSE,
				"muted_kinds" VARCHAR NOT NULL DEFAULT '',
				"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("app_id", "user_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
			);

-- 20261123110001_orders_wallet
ALTER TABLE "orders" ADD COLUMN "cart_id" VARCHAR;
ALTER TABLE "orders" ADD COLUMN "paid_at" TIMESTAMP;
CREATE UNIQUE INDEX "orders_cart_id_idx" ON "orders" ("cart_id");
CREATE INDEX "orders_app_id_status_created_at_idx" ON "orders" ("app_id", "status", "created_at");
ALTER TABLE "order_items" ADD COLUMN "item_stock_taken" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "order_items" ADD COLUMN "variant_stock_taken" BOOLEAN NOT NULL DEFAULT false;
CREATE TABLE "entitlements" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"order_id" VARCHAR NOT NULL,
				"store_item_id" VARCHAR NOT NULL,
				"kind" VARCHAR NOT NULL,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"revoked_at" TIMESTAMP,
				PRIMARY KEY ("id"),
				CONSTRAINT "entitlement_order_item" UNIQUE ("order_id", "store_item_id", "kind"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
				FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE,
				FOREIGN KEY (store_item_id) REFERENCES store_items (id)
			);
CREATE INDEX "entitlements_app_id_user_id_idx" ON "entitlements" ("app_id", "user_id");
CREATE TABLE "wallet_accounts" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"kind" VARCHAR NOT NULL,
				"owner_id" VARCHAR NOT NULL DEFAULT '',
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"balance" INTEGER NOT NULL DEFAULT 0,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				CONSTRAINT "wallet_account_owner" UNIQUE ("app_id", "kind", "owner_id", "currency"),
				CONSTRAINT "wallet_balance_not_negative" CHECK (balance >= 0 OR kind = 'EXTERNAL'),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE TABLE "wallet_transfers" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"reference" VARCHAR NOT NULL,
				"kind" VARCHAR NOT NULL,
				"amount" INTEGER NOT NULL,
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"order_id" VARCHAR,
				"memo" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				CONSTRAINT "wallet_transfer_reference" UNIQUE ("app_id", "reference"),
				CONSTRAINT "wallet_transfer_positive" CHECK (amount > 0),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE TABLE "wallet_entries" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"transfer_id" VARCHAR NOT NULL,
				"account_id" VARCHAR NOT NULL,
				"amount" INTEGER NOT NULL,
				"balance_after" INTEGER NOT NULL,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (transfer_id) REFERENCES wallet_transfers (id) ON DELETE CASCADE,
				FOREIGN KEY (account_id) REFERENCES wallet_accounts (id) ON DELETE CASCADE
			);
CREATE INDEX "wallet_entries_account_id_created_at_idx" ON "wallet_entries" ("account_id", "created_at");
CREATE INDEX "wallet_entries_transfer_id_idx" ON "wallet_entries" ("transfer_id");

-- 20261123120001_payment_events
CREATE TABLE "payment_events" (
				"id" VARCHAR NOT NULL,
				"provider" VARCHAR NOT NULL,
				"event_id" VARCHAR NOT NULL,
				"type" VARCHAR NOT NULL,
				"app_id" VARCHAR,
				"order_id" VARCHAR,
				"payment_ref" VARCHAR NOT NULL DEFAULT '',
				"amount" INTEGER NOT NULL DEFAULT 0,
				"currency" VARCHAR NOT NULL DEFAULT '',
				"outcome" VARCHAR NOT NULL DEFAULT '',
				"message" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				CONSTRAINT "payment_events_provider_event" UNIQUE ("provider", "event_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE
			);
CREATE INDEX "payment_events_order_id_idx" ON "payment_events" ("order_id", "created_at");
CREATE INDEX "orders_payment_ref_idx" ON "orders" ("payment_ref");

-- 20261123120002_memberships
ALTER TABLE "subscriptions" ADD COLUMN "amount" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "subscriptions" ADD COLUMN "currency" VARCHAR NOT NULL DEFAULT 'USD';
ALTER TABLE "subscriptions" ADD COLUMN "provider" VARCHAR NOT NULL DEFAULT '';
ALTER TABLE "subscriptions" ADD COLUMN "provider_ref" VARCHAR NOT NULL DEFAULT '';
ALTER TABLE "subscriptions" ADD COLUMN "order_id" VARCHAR;
ALTER TABLE "subscriptions" ADD COLUMN "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "subscriptions" ADD COLUMN "grace_until" TIMESTAMP;
ALTER TABLE "subscriptions" ADD COLUMN "ended_at" TIMESTAMP;
ALTER TABLE "subscriptions" ADD COLUMN "renewals" INTEGER NOT NULL DEFAULT 0;
DROP INDEX IF EXISTS "subscriptions_app_id_user_id_idx";
CREATE UNIQUE INDEX "subscriptions_app_id_user_id_key" ON "subscriptions" ("app_id", "user_id");
CREATE INDEX "subscriptions_status_current_period_end_idx" ON "subscriptions" ("status", "current_period_end");
CREATE INDEX "subscriptions_provider_ref_idx" ON "subscriptions" ("provider_ref");
ALTER TABLE "donations" ADD COLUMN "payment_method" VARCHAR NOT NULL DEFAULT '';
ALTER TABLE "donations" ADD COLUMN "payment_ref" VARCHAR NOT NULL DEFAULT '';
CREATE INDEX "donations_app_id_status_created_at_idx" ON "donations" ("app_id", "status", "created_at");
CREATE INDEX "donations_app_id_user_id_status_idx" ON "donations" ("app_id", "user_id", "status");

-- 20261123130001_item_event
ALTER TABLE "store_items" ADD COLUMN "event_id" VARCHAR;
CREATE INDEX "store_items_event_id_idx" ON "store_items" ("event_id");

-- 20261123140001_search_fts
CREATE VIRTUAL TABLE "messages_fts" USING fts5(id UNINDEXED, content, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER "messages_fts_insert" AFTER INSERT ON "messages" WHEN new."type" = 'POST' BEGIN
		INSERT INTO "messages_fts" (id, content) VALUES (new."id", new."content");
	END;
CREATE TRIGGER "messages_fts_update" AFTER UPDATE OF "content", "type" ON "messages" BEGIN
		DELETE FROM "messages_fts" WHERE id = old."id";
		INSERT INTO "messages_fts" (id, content) SELECT new."id", new."content" WHERE new."type" = 'POST';
	END;
CREATE TRIGGER "messages_fts_delete" AFTER DELETE ON "messages" BEGIN
		DELETE FROM "messages_fts" WHERE id = old."id";
	END;
INSERT INTO "messages_fts" (id, content) SELECT "id", "content" FROM "messages" WHERE "type" = 'POST';
CREATE VIRTUAL TABLE "store_items_fts" USING fts5(id UNINDEXED, name, description, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER "store_items_fts_insert" AFTER INSERT ON "store_items" WHEN new."deleted_at" IS NULL BEGIN
		INSERT INTO "store_items_fts" (id, name, description) VALUES (new."id", new."name", new."description");
	END;
CREATE TRIGGER "store_items_fts_update" AFTER UPDATE OF "name", "description", "deleted_at" ON "store_items" BEGIN
		DELETE FROM "store_items_fts" WHERE id = old."id";
		INSERT INTO "store_items_fts" (id, name, description) SELECT new."id", new."name", new."description" WHERE new."deleted_at" IS NULL;
	END;
CREATE TRIGGER "store_items_fts_delete" AFTER DELETE ON "store_items" BEGIN
		DELETE FROM "store_items_fts" WHERE id = old."id";
	END;
INSERT INTO "store_items_fts" (id, name, description) SELECT "id", "name", "description" FROM "store_items" WHERE "deleted_at" IS NULL;
CREATE VIRTUAL TABLE "events_fts" USING fts5(id UNINDEXED, name, description, location, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER "events_fts_insert" AFTER INSERT ON "events" BEGIN
		INSERT INTO "events_fts" (id, name, description, location) VALUES (new."id", new."name", new."description", new."location");
	END;
CREATE TRIGGER "events_fts_update" AFTER UPDATE OF "name", "description", "location" ON "events" BEGIN
		DELETE FROM "events_fts" WHERE id = old."id";
		INSERT INTO "events_fts" (id, name, description, location) VALUES (new."id", new."name", new."description", new."location");
	END;
CREATE TRIGGER "events_fts_delete" AFTER DELETE ON "events" BEGIN
		DELETE FROM "events_fts" WHERE id = old."id";
	END;
INSERT INTO "events_fts" (id, name, description, location) SELECT "id", "name", "description", "location" FROM "events";

-- 20261123150001_list_indexes
CREATE INDEX "messages_feed_idx" ON "messages" ("community_id", "type", "created_at", "id") WHERE parent_message_id IS NULL;
CREATE INDEX "store_items_live_created_idx" ON "store_items" ("store_id", "created_at", "id") WHERE deleted_at IS NULL;
CREATE INDEX "store_items_live_type_created_idx" ON "store_items" ("store_id", "type", "created_at", "id") WHERE deleted_at IS NULL;
CREATE INDEX "store_items_live_price_idx" ON "store_items" ("store_id", "price") WHERE deleted_at IS NULL;
CREATE INDEX "store_item_tags_tag_id_idx" ON "store_item_tags" ("tag_id");
CREATE INDEX "message_tags_tag_id_idx" ON "message_tags" ("tag_id");
CREATE INDEX "events_app_id_end_date_idx" ON "events" ("app_id", "end_date");
CREATE INDEX "events_app_id_type_start_date_idx" ON "events" ("app_id", "type", "start_date");

-- 20261123150010_media_variants
ALTER TABLE "media" ADD COLUMN "width" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "media" ADD COLUMN "height" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "media" ADD COLUMN "variants" VARCHAR NOT NULL DEFAULT '';
ALTER TABLE "media" ADD COLUMN "variant_type" VARCHAR NOT NULL DEFAULT '';

-- 20261125100001_refunds_ledger_seq
ALTER TABLE "orders" ADD COLUMN "refunded_amount" INTEGER NOT NULL DEFAULT 0;
UPDATE "orders" SET "refunded_amount" = "total" WHERE "status" = 'REFUNDED';
ALTER TABLE "wallet_accounts" ADD COLUMN "entry_count" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "wallet_entries" ADD COLUMN "seq" INTEGER NOT NULL DEFAULT 0;
UPDATE "wallet_entries" SET "seq" = (SELECT COUNT(*) FROM "wallet_entries" AS e2
					WHERE e2.account_id = wallet_entries.account_id
					AND (e2.created_at < wallet_entries.created_at OR (e2.created_at = wallet_entries.created_at AND e2.id <= wallet_entries.id)));
UPDATE "wallet_accounts" SET "entry_count" = (SELECT COUNT(*) FROM "wallet_entries" AS e WHERE e.account_id = wallet_accounts.id);
CREATE INDEX "wallet_entries_account_id_seq_idx" ON "wallet_entries" ("account_id", "seq");

-- 20261125120001_link_icons
CREATE TABLE "link_icons" (
			"domain" VARCHAR NOT NULL PRIMARY KEY,
			"status" VARCHAR NOT NULL DEFAULT 'PENDING',
			"content_type" VARCHAR NOT NULL DEFAULT '',
			"body" BLOB,
			"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
			"fetched_at" TIMESTAMP
		);

-- 20261126150000_accounts_mail
CREATE TABLE "mails" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"mail_key" VARCHAR NOT NULL UNIQUE,
				"kind" VARCHAR NOT NULL,
				"app_id" VARCHAR,
				"user_id" VARCHAR,
				"to_addr" VARCHAR NOT NULL,
				"transactional" BOOLEAN NOT NULL DEFAULT false,
				"content" TEXT NOT NULL,
				"unsubscribe_token" VARCHAR UNIQUE,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"sent_at" TIMESTAMP
			);
CREATE INDEX "mails_user_idx" ON "mails" ("user_id");
CREATE TABLE "account_tokens" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"user_id" VARCHAR NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
				"purpose" VARCHAR NOT NULL,
				"email" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"expires_at" TIMESTAMP NOT NULL,
				"used_at" TIMESTAMP
			);
CREATE INDEX "account_tokens_user_idx" ON "account_tokens" ("user_id", "purpose");
ALTER TABLE "notification_preferences" ADD COLUMN "email_muted_all" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "notification_preferences" ADD COLUMN "email_muted_kinds" VARCHAR NOT NULL DEFAULT '';
ALTER TABLE "sessions" ADD COLUMN "last_used_at" TIMESTAMP;
ALTER TABLE "users" ADD COLUMN "deleted_at" TIMESTAMP;

-- 20261126150100_data_exports
CREATE TABLE "data_exports" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"user_id" VARCHAR NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
				"token_hash" VARCHAR NOT NULL UNIQUE,
				"app_id" VARCHAR,
				"content" TEXT,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"ready_at" TIMESTAMP,
				"expires_at" TIMESTAMP NOT NULL
			);
CREATE INDEX "data_exports_user_idx" ON "data_exports" ("user_id");

-- 20261126160000_studio
CREATE TABLE "app_audit" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"actor_id" VARCHAR NOT NULL DEFAULT '',
				"action" VARCHAR NOT NULL,
				"target_id" VARCHAR NOT NULL DEFAULT '',
				"detail" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp
			);
CREATE INDEX "app_audit_app_created" ON "app_audit" ("app_id", "created_at");

-- 20261126180000_moderation
ALTER TABLE "messages" ADD COLUMN "hidden" VARCHAR NOT NULL DEFAULT '';
ALTER TABLE "events" ADD COLUMN "hidden" VARCHAR NOT NULL DEFAULT '';
CREATE TABLE "reports" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"reporter_id" VARCHAR NOT NULL,
				"target_type" VARCHAR NOT NULL,
				"target_id" VARCHAR NOT NULL,
				"target_user_id" VARCHAR NOT NULL,
				"reason" VARCHAR NOT NULL,
				"text" VARCHAR NOT NULL DEFAULT '',
				"status" VARCHAR NOT NULL DEFAULT 'OPEN',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"resolved_at" TIMESTAMP,
				PRIMARY KEY ("id"),
				CONSTRAINT "report_once" UNIQUE ("app_id", "reporter_id", "target_type", "target_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (reporter_id) REFERENCES users (id) ON DELETE CASCADE
			);
CREATE INDEX "reports_app_id_status_idx" ON "reports" ("app_id", "status", "target_type", "target_id");
CREATE TABLE "bans" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"email" VARCHAR NOT NULL DEFAULT '',
				"kind" VARCHAR NOT NULL,
				"reason" VARCHAR NOT NULL DEFAULT '',
				"ends_at" TIMESTAMP,
				"created_by" VARCHAR NOT NULL,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				CONSTRAINT "ban_once" UNIQUE ("app_id", "user_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE INDEX "bans_app_id_email_idx" ON "bans" ("app_id", "email");
CREATE TABLE "moderation_log" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"actor_id" VARCHAR NOT NULL DEFAULT '',
				"action" VARCHAR NOT NULL,
				"target_type" VARCHAR NOT NULL DEFAULT '',
				"target_id" VARCHAR NOT NULL DEFAULT '',
				"target_user_id" VARCHAR NOT NULL DEFAULT '',
				"reason" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE INDEX "moderation_log_app_id_created_at_idx" ON "moderation_log" ("app_id", "created_at");

-- 20261126190000_item_files
CREATE TABLE "item_files" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"store_item_id" VARCHAR NOT NULL,
				"name" VARCHAR NOT NULL,
				"mime_type" VARCHAR NOT NULL,
				"size" INTEGER NOT NULL,
				"path" VARCHAR NOT NULL UNIQUE,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
			);
CREATE INDEX "item_files_item" ON "item_files" ("store_item_id");
ALTER TABLE "entitlements" ADD COLUMN "downloads" INTEGER NOT NULL DEFAULT 0;

-- 20261126190100_one_audit_log
INSERT INTO "moderation_log" ("id", "app_id", "actor_id", "action", "target_type", "target_id", "target_user_id", "reason", "created_at")
			SELECT "id", "app_id", "actor_id", "action", CASE WHEN "target_id" <> '' THEN 'MEMBER' ELSE '' END, "target_id", "target_id", "detail", "created_at"
			FROM "app_audit" WHERE "app_id" IN (SELECT "id" FROM "apps");
DROP TABLE "app_audit";

-- 20261126190200_payouts
CREATE TABLE "payout_accounts" (
				"app_id" VARCHAR NOT NULL,
				"stripe_account_id" VARCHAR NOT NULL DEFAULT '',
				"charges_enabled" BOOLEAN NOT NULL DEFAULT FALSE,
				"payouts_enabled" BOOLEAN NOT NULL DEFAULT FALSE,
				"details_submitted" BOOLEAN NOT NULL DEFAULT FALSE,
				"currently_due" VARCHAR NOT NULL DEFAULT '',
				"disabled_reason" VARCHAR NOT NULL DEFAULT '',
				"fee_bp" INTEGER,
				"state_at" INTEGER NOT NULL DEFAULT 0,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("app_id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE INDEX "payout_accounts_stripe_account_id_idx" ON "payout_accounts" ("stripe_account_id");
CREATE INDEX "wallet_transfers_order_id_idx" ON "wallet_transfers" ("order_id");

-- 20261126190500_operator
ALTER TABLE "users" ADD COLUMN "disabled_at" TIMESTAMP;
CREATE TABLE "push_failures" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"subscription_id" VARCHAR NOT NULL,
				"notification_id" VARCHAR NOT NULL,
				"endpoint_host" VARCHAR NOT NULL DEFAULT '',
				"status" INTEGER NOT NULL DEFAULT 0,
				"error" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id")
			);
CREATE INDEX "push_failures_created_at_idx" ON "push_failures" ("created_at");
CREATE INDEX "notifications_created_at_idx" ON "notifications" ("created_at");
CREATE INDEX "sessions_expires_at_idx" ON "sessions" ("expires_at");

-- 20261126200000_wallet_topups
CREATE TABLE "wallet_topups" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"amount" INTEGER NOT NULL,
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"status" VARCHAR NOT NULL DEFAULT 'PENDING',
				"payment_method" VARCHAR NOT NULL DEFAULT '',
				"payment_ref" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"paid_at" TIMESTAMP
			);
CREATE INDEX "wallet_topups_app_user" ON "wallet_topups" ("app_id", "user_id", "created_at");

-- 20261126200002_role_history
CREATE TABLE "role_changes" (
					"id" VARCHAR NOT NULL PRIMARY KEY,
					"app_id" VARCHAR NOT NULL,
					"user_id" VARCHAR NOT NULL,
					"role" VARCHAR NOT NULL DEFAULT '',
					"previous" VARCHAR NOT NULL DEFAULT '',
					"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
					FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
				);
CREATE INDEX "role_changes_app_time" ON "role_changes" ("app_id", "created_at");
CREATE INDEX "role_changes_app_user" ON "role_changes" ("app_id", "user_id", "created_at");
INSERT INTO "role_changes" ("id", "app_id", "user_id", "role", "previous", "created_at")
					SELECT "id", "app_id", "user_id", "role", '', "created_at" FROM "memberships";

-- 20261126200003_item_uploads
CREATE TABLE "item_uploads" (
				"id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"store_item_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"name" VARCHAR NOT NULL,
				"mime_type" VARCHAR NOT NULL,
				"size" INTEGER NOT NULL,
				"part_size" INTEGER NOT NULL,
				"path" VARCHAR NOT NULL UNIQUE,
				"storage_upload_id" VARCHAR NOT NULL,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				PRIMARY KEY ("id"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
			);
CREATE INDEX "item_uploads_item" ON "item_uploads" ("store_item_id");
CREATE TABLE "item_upload_parts" (
				"upload_id" VARCHAR NOT NULL,
				"number" INTEGER NOT NULL,
				"size" INTEGER NOT NULL,
				"etag" VARCHAR NOT NULL,
				PRIMARY KEY ("upload_id", "number"),
				FOREIGN KEY (upload_id) REFERENCES item_uploads (id) ON DELETE CASCADE
			);

-- 20261126200100_paypal_payees
CREATE TABLE "app_paypal_payees" (
				"app_id" VARCHAR NOT NULL PRIMARY KEY,
				"merchant_id" VARCHAR NOT NULL DEFAULT '',
				"email" VARCHAR NOT NULL DEFAULT '',
				"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp
			);
CREATE TABLE "platform_fees_owed" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"order_id" VARCHAR NOT NULL,
				"provider" VARCHAR NOT NULL,
				"payment_ref" VARCHAR NOT NULL,
				"payee" VARCHAR NOT NULL DEFAULT '',
				"gross" INTEGER NOT NULL,
				"amount" INTEGER NOT NULL,
				"currency" VARCHAR NOT NULL DEFAULT 'USD',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				CONSTRAINT "platform_fees_owed_payment" UNIQUE ("provider", "payment_ref")
			);
CREATE INDEX "platform_fees_owed_app" ON "platform_fees_owed" ("app_id", "created_at");

-- 20261127080000_user_apps_indexes
CREATE INDEX "messages_sender_id_app_id_idx" ON "messages" ("sender_id", "app_id");
CREATE INDEX "attendees_user_id_app_id_idx" ON "attendees" ("user_id", "app_id");

-- 20261128130000_post_schedule
ALTER TABLE "messages" ADD COLUMN "publish_at" TIMESTAMP;
ALTER TABLE "messages" ADD COLUMN "newsletter" BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX "messages_scheduled_idx" ON "messages" ("publish_at") WHERE "hidden" = 'SCHEDULED';

-- 20261128130100_newsletter
CREATE TABLE "newsletter_recipients" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"message_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"email" VARCHAR NOT NULL,
				"state" VARCHAR NOT NULL DEFAULT 'PENDING',
				"attempts" INTEGER NOT NULL DEFAULT 0,
				"last_error" VARCHAR NOT NULL DEFAULT '',
				"unsubscribe_token" VARCHAR NOT NULL UNIQUE,
				"next_attempt_at" TIMESTAMP,
				"claimed_at" TIMESTAMP,
				"sent_at" TIMESTAMP,
				"unsubscribed_at" TIMESTAMP,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				CONSTRAINT "newsletter_recipients_once" UNIQUE ("message_id", "user_id")
			);
CREATE INDEX "newsletter_recipients_state_idx" ON "newsletter_recipients" ("message_id", "state");
CREATE INDEX "newsletter_recipients_app_idx" ON "newsletter_recipients" ("app_id", "email");
CREATE TABLE "mail_bounces" (
				"email" VARCHAR NOT NULL PRIMARY KEY,
				"bounces" INTEGER NOT NULL DEFAULT 0,
				"undeliverable" BOOLEAN NOT NULL DEFAULT false,
				"last_error" VARCHAR NOT NULL DEFAULT '',
				"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp
			);
CREATE TABLE "newsletter_pace" (
				"id" INTEGER NOT NULL PRIMARY KEY,
				"next_ns" INTEGER NOT NULL DEFAULT 0
			);
INSERT INTO "newsletter_pace" ("id", "next_ns") VALUES (1, 0);

-- 20261129120000_tiers
ALTER TABLE "subscription_plans" ADD COLUMN "tier_rank" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "subscription_plans" ADD COLUMN "state" VARCHAR NOT NULL DEFAULT 'ON_SALE';
ALTER TABLE "subscription_plans" ADD COLUMN "monthly_price" INTEGER;
ALTER TABLE "subscription_plans" ADD COLUMN "yearly_price" INTEGER;
ALTER TABLE "subscription_plans" ADD COLUMN "trial_days" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "subscriptions" ADD COLUMN "cycle" VARCHAR NOT NULL DEFAULT '';
UPDATE "subscription_plans" SET "monthly_price" = (SELECT i.price FROM store_items AS i WHERE i.id = subscription_plans.store_item_id)
				WHERE "billing_cycle" = 'MONTHLY';
UPDATE "subscription_plans" SET "yearly_price" = (SELECT i.price FROM store_items AS i WHERE i.id = subscription_plans.store_item_id)
				WHERE "billing_cycle" = 'YEARLY';
UPDATE "subscription_plans" SET "state" = 'ARCHIVED'
				WHERE EXISTS (SELECT 1 FROM store_items AS i WHERE i.id = subscription_plans.store_item_id AND i.deleted_at IS NOT NULL);
UPDATE "subscription_plans" SET "state" = 'DRAFT' WHERE "billing_cycle" NOT IN ('MONTHLY', 'YEARLY') AND "state" = 'ON_SALE';
UPDATE "subscription_plans" SET "tier_rank" = 1 + (SELECT COUNT(*) FROM subscription_plans AS o
				JOIN store_items AS oi ON oi.id = o.store_item_id, store_items AS si
				WHERE si.id = subscription_plans.store_item_id AND o.app_id = subscription_plans.app_id
				AND (oi.price < si.price OR (oi.price = si.price AND o.id < subscription_plans.id)));
CREATE INDEX "subscription_plans_app_rank_idx" ON "subscription_plans" ("app_id", "tier_rank");

-- 20261129120100_message_access
ALTER TABLE "messages" ADD COLUMN "access_audience" VARCHAR NOT NULL DEFAULT 'PUBLIC';
ALTER TABLE "messages" ADD COLUMN "access_min_tier_id" VARCHAR;
ALTER TABLE "messages" ADD COLUMN "teaser" VARCHAR NOT NULL DEFAULT '';

-- 20261129130000_email_digest
ALTER TABLE "notification_preferences" ADD COLUMN "email_digest" BOOLEAN NOT NULL DEFAULT false;

-- 20261130110000_ban_email_keys
SELECT "id", "email" FROM "bans" WHERE (email LIKE '%@gmail.com' OR email LIKE '%@googlemail.com');

-- 20261130110100_event_notice_source
UPDATE notifications SET source = (
	SELECT 'event:' || e.id FROM events AS e
	WHERE e.app_id = notifications.app_id AND notifications.link LIKE ('%/events/' || e.id) LIMIT 1)
WHERE kind = 'EVENT_UPDATE' AND source = '' AND EXISTS (
	SELECT 1 FROM events AS e WHERE e.app_id = notifications.app_id AND notifications.link LIKE ('%/events/' || e.id));

-- 20261130120000_shipping_zones
CREATE TABLE "shipping_zones" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"name" VARCHAR NOT NULL,
				"flat_rate" INTEGER NOT NULL DEFAULT 0,
				"per_item" INTEGER NOT NULL DEFAULT 0,
				"free_over" INTEGER NOT NULL DEFAULT 0,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE INDEX "shipping_zones_app_idx" ON "shipping_zones" ("app_id", "name");
CREATE TABLE "shipping_zone_countries" (
				"app_id" VARCHAR NOT NULL,
				"country" VARCHAR NOT NULL,
				"zone_id" VARCHAR NOT NULL,
				PRIMARY KEY ("app_id", "country"),
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (zone_id) REFERENCES shipping_zones (id) ON DELETE CASCADE
			);
CREATE INDEX "shipping_zone_countries_zone_idx" ON "shipping_zone_countries" ("zone_id");
ALTER TABLE "orders" ADD COLUMN "shipping" INTEGER NOT NULL DEFAULT 0;

-- 20261130120100_app_exports
CREATE TABLE "app_exports" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"token_hash" VARCHAR NOT NULL UNIQUE,
				"content" BLOB,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"ready_at" TIMESTAMP,
				"expires_at" TIMESTAMP NOT NULL,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE INDEX "app_exports_app_idx" ON "app_exports" ("app_id", "created_at");

-- 20261130130000_event_access
ALTER TABLE "events" ADD COLUMN "access_audience" VARCHAR NOT NULL DEFAULT 'PUBLIC';
ALTER TABLE "events" ADD COLUMN "access_min_tier_id" VARCHAR;

-- 20261130130100_media_lookups
CREATE INDEX "message_attachments_media" ON "message_attachments" ("media_id");
CREATE INDEX "event_media_media" ON "event_media" ("media_id");

-- 20261201010000_app_launch
ALTER TABLE "apps" ADD COLUMN "unpublished" BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE "apps" ADD COLUMN "previewed_visitor_at" TIMESTAMP;
ALTER TABLE "apps" ADD COLUMN "previewed_member_at" TIMESTAMP;

-- 20261201020000_app_domains
CREATE TABLE "app_domains" (
				"app_id" VARCHAR NOT NULL PRIMARY KEY,
				"domain" VARCHAR NOT NULL,
				"token" VARCHAR NOT NULL,
				"state" VARCHAR NOT NULL DEFAULT 'pending',
				"last_error" VARCHAR NOT NULL DEFAULT '',
				"checked_at" TIMESTAMP,
				"verified_at" TIMESTAMP,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE UNIQUE INDEX "app_domains_domain" ON "app_domains" ("domain");
CREATE TABLE "domain_sign_ins" (
				"code" VARCHAR NOT NULL PRIMARY KEY,
				"domain" VARCHAR NOT NULL,
				"session_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"expires_at" TIMESTAMP NOT NULL
			);
CREATE INDEX "domain_sign_ins_expires" ON "domain_sign_ins" ("expires_at");
ALTER TABLE "sessions" ADD COLUMN "linked_id" VARCHAR;
CREATE INDEX "sessions_linked" ON "sessions" ("linked_id");

-- 20261201030000_trials_offers
ALTER TABLE "subscription_plans" ADD COLUMN "trial_card_required" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "subscriptions" ADD COLUMN "trial_until" TIMESTAMP;
ALTER TABLE "subscriptions" ADD COLUMN "trial_reminded" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "subscriptions" ADD COLUMN "offer_id" VARCHAR;
ALTER TABLE "subscriptions" ADD COLUMN "list_amount" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "subscriptions" ADD COLUMN "discount_left" INTEGER NOT NULL DEFAULT 0;
CREATE TABLE "trials" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"plan_id" VARCHAR NOT NULL,
				"started_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"ends_at" TIMESTAMP NOT NULL,
				"converted_at" TIMESTAMP,
				"ended_at" TIMESTAMP,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE UNIQUE INDEX "trials_app_user_key" ON "trials" ("app_id", "user_id");
CREATE TABLE "offers" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"code" VARCHAR NOT NULL,
				"percent_off" INTEGER NOT NULL DEFAULT 0,
				"amount_off" INTEGER NOT NULL DEFAULT 0,
				"duration" VARCHAR NOT NULL DEFAULT 'ONCE',
				"duration_months" INTEGER NOT NULL DEFAULT 0,
				"expires_at" TIMESTAMP,
				"max_redemptions" INTEGER NOT NULL DEFAULT 0,
				"redemptions" INTEGER NOT NULL DEFAULT 0,
				"plan_id" VARCHAR,
				"active" BOOLEAN NOT NULL DEFAULT true,
				"stripe_coupon" VARCHAR NOT NULL DEFAULT '',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE UNIQUE INDEX "offers_app_code_key" ON "offers" ("app_id", "code");
CREATE TABLE "offer_redemptions" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"offer_id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"plan_id" VARCHAR NOT NULL,
				"method" VARCHAR NOT NULL DEFAULT '',
				"discount" INTEGER NOT NULL DEFAULT 0,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (offer_id) REFERENCES offers (id) ON DELETE CASCADE,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
			);
CREATE UNIQUE INDEX "offer_redemptions_offer_user_key" ON "offer_redemptions" ("offer_id", "user_id");
CREATE INDEX "offer_redemptions_app_idx" ON "offer_redemptions" ("app_id", "created_at");

-- 20261201040000_tier_changes
ALTER TABLE "subscriptions" ADD COLUMN "next_plan_id" VARCHAR;
ALTER TABLE "subscriptions" ADD COLUMN "next_amount" INTEGER;

-- 20261201070000_acme_storage
CREATE TABLE "acme_storage" (
				"key" VARCHAR NOT NULL PRIMARY KEY,
				"value" BLOB NOT NULL,
				"modified" BIGINT NOT NULL
			);
CREATE TABLE "acme_locks" (
				"name" VARCHAR NOT NULL PRIMARY KEY,
				"owner" VARCHAR NOT NULL,
				"expires" BIGINT NOT NULL
			);

-- 20261202000000_paypal_catalog
CREATE TABLE "paypal_catalog" (
				"key" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"paypal_id" VARCHAR NOT NULL,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp
			);
CREATE INDEX "paypal_catalog_app_idx" ON "paypal_catalog" ("app_id");

-- 20261202100000_role_history_tiers
ALTER TABLE "role_changes" ADD COLUMN "tier_id" VARCHAR NOT NULL DEFAULT '';
UPDATE "role_changes" SET "tier_id" = COALESCE((SELECT s.plan_id FROM subscriptions AS s
				WHERE s.app_id = role_changes.app_id AND s.user_id = role_changes.user_id AND s.status IN ('ACTIVE', 'PAST_DUE')
				AND s.amount > 0 AND s.provider <> 'COMP' AND s.trial_until IS NULL LIMIT 1), '')
			WHERE "role" <> '' AND "id" = (SELECT c.id FROM role_changes AS c WHERE c.app_id = role_changes.app_id
				AND c.user_id = role_changes.user_id ORDER BY c.created_at DESC, c.id DESC LIMIT 1);

-- 20261203000000_push_origin
ALTER TABLE "push_subscriptions" ADD COLUMN "origin" VARCHAR NOT NULL DEFAULT '';

-- 20261203100000_card_trials
CREATE TABLE "card_trials" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"plan_id" VARCHAR NOT NULL,
				"item_id" VARCHAR NOT NULL,
				"cycle" VARCHAR NOT NULL DEFAULT '',
				"offer_code" VARCHAR NOT NULL DEFAULT '',
				"session_ref" VARCHAR NOT NULL DEFAULT '',
				"provider_ref" VARCHAR NOT NULL DEFAULT '',
				"status" VARCHAR NOT NULL DEFAULT 'PENDING',
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
				FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
			);
CREATE UNIQUE INDEX "card_trials_app_user_key" ON "card_trials" ("app_id", "user_id");
CREATE INDEX "card_trials_session_idx" ON "card_trials" ("session_ref");

-- 20261203200000_paypal_tier_changes
CREATE TABLE "paypal_tier_changes" (
				"id" VARCHAR NOT NULL PRIMARY KEY,
				"key" VARCHAR NOT NULL UNIQUE,
				"subscription_id" VARCHAR NOT NULL,
				"app_id" VARCHAR NOT NULL,
				"user_id" VARCHAR NOT NULL,
				"provider_ref" VARCHAR NOT NULL,
				"direction" VARCHAR NOT NULL,
				"from_plan_id" VARCHAR NOT NULL,
				"to_plan_id" VARCHAR NOT NULL,
				"cycle" VARCHAR NOT NULL,
				"price" INTEGER NOT NULL,
				"charge" INTEGER NOT NULL,
				"currency" VARCHAR NOT NULL,
				"period_end" TIMESTAMP NOT NULL,
				"paypal_plan_id" VARCHAR NOT NULL,
				"approval_url" VARCHAR NOT NULL DEFAULT '',
				"charge_ref" VARCHAR NOT NULL DEFAULT '',
				"status" VARCHAR NOT NULL,
				"created_at" TIMESTAMP NOT NULL DEFAULT current_timestamp,
				"updated_at" TIMESTAMP NOT NULL DEFAULT current_timestamp
			);
CREATE INDEX "paypal_tier_changes_ref_idx" ON "paypal_tier_changes" ("provider_ref", "status");

-- 20261204000000_paypal_tier_change_offers
ALTER TABLE "paypal_tier_changes" ADD COLUMN "offer_id" VARCHAR NOT NULL DEFAULT '';
ALTER TABLE "paypal_tier_changes" ADD COLUMN "list_charge" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "paypal_tier_changes" ADD COLUMN "next_charge" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "paypal_tier_changes" ADD COLUMN "discount_left" INTEGER NOT NULL DEFAULT 0;

