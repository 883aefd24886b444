package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// initialSchema is the SQL that bun generated from the store models when this
// migration was first run, copied out so that later model edits cannot change
// what a fresh database gets. It is the PostgreSQL text; for SQLite bun wrote
// INTEGER and TIMESTAMP instead of BIGINT and TIMESTAMPTZ, and sqliteTypes
// does the same so new SQLite databases match the ones already out there.
var initialSchema = []string{
	`CREATE TABLE "secrets" (
		"name" VARCHAR NOT NULL,
		"value" VARCHAR NOT NULL,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("name")
	)`,
	`CREATE TABLE "users" (
		"id" VARCHAR NOT NULL,
		"username" VARCHAR NOT NULL,
		"email" VARCHAR NOT NULL,
		"email_verified" BOOLEAN NOT NULL DEFAULT false,
		"password_hash" VARCHAR NOT NULL,
		"profile_media_id" VARCHAR,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("username"),
		UNIQUE ("email")
	)`,
	`CREATE TABLE "apps" (
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
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("name"),
		FOREIGN KEY (creator_id) REFERENCES users (id)
	)`,
	`CREATE TABLE "sessions" (
		"id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"user_agent" VARCHAR NOT NULL DEFAULT '',
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"expires_at" TIMESTAMPTZ NOT NULL,
		PRIMARY KEY ("id"),
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "sessions_user_id_idx" ON "sessions" ("user_id")`,
	`CREATE TABLE "memberships" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"role" VARCHAR NOT NULL,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		CONSTRAINT "membership_app_user" UNIQUE ("app_id", "user_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "memberships_user_id_idx" ON "memberships" ("user_id")`,
	`CREATE TABLE "communities" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL DEFAULT '',
		"description" VARCHAR NOT NULL DEFAULT '',
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("app_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "media" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR,
		"owner_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL DEFAULT '',
		"type" VARCHAR NOT NULL,
		"size" BIGINT NOT NULL DEFAULT 0,
		"mime_type" VARCHAR NOT NULL,
		"path" VARCHAR NOT NULL,
		"description" VARCHAR NOT NULL DEFAULT '',
		"media_key" VARCHAR NOT NULL DEFAULT '',
		"status" VARCHAR NOT NULL DEFAULT 'PENDING',
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("path"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (owner_id) REFERENCES users (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "media_app_id_created_at_idx" ON "media" ("app_id", "created_at")`,
	`CREATE TABLE "messages" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"community_id" VARCHAR NOT NULL,
		"sender_id" VARCHAR NOT NULL,
		"type" VARCHAR NOT NULL,
		"content" VARCHAR NOT NULL DEFAULT '',
		"parent_message_id" VARCHAR,
		"is_featured" BOOLEAN NOT NULL DEFAULT false,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (community_id) REFERENCES communities (id) ON DELETE CASCADE,
		FOREIGN KEY (sender_id) REFERENCES users (id) ON DELETE CASCADE,
		FOREIGN KEY (parent_message_id) REFERENCES messages (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "messages_community_id_type_created_at_idx" ON "messages" ("community_id", "type", "created_at")`,
	`CREATE INDEX "messages_parent_message_id_created_at_idx" ON "messages" ("parent_message_id", "created_at")`,
	`CREATE INDEX "messages_app_id_type_created_at_idx" ON "messages" ("app_id", "type", "created_at")`,
	`CREATE TABLE "message_attachments" (
		"message_id" VARCHAR NOT NULL,
		"media_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"position" BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY ("message_id", "media_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE,
		FOREIGN KEY (media_id) REFERENCES media (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "reactions" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"message_id" VARCHAR NOT NULL,
		"sender_id" VARCHAR NOT NULL,
		"reaction" VARCHAR NOT NULL,
		"media_id" VARCHAR,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		CONSTRAINT "reaction_once" UNIQUE ("message_id", "sender_id", "reaction"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE,
		FOREIGN KEY (sender_id) REFERENCES users (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "tags" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		PRIMARY KEY ("id"),
		CONSTRAINT "tag_app_name" UNIQUE ("app_id", "name"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "message_tags" (
		"message_id" VARCHAR NOT NULL,
		"tag_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		PRIMARY KEY ("message_id", "tag_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE,
		FOREIGN KEY (tag_id) REFERENCES tags (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "stores" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL DEFAULT '',
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		UNIQUE ("app_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "store_items" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"description" VARCHAR NOT NULL DEFAULT '',
		"type" VARCHAR NOT NULL,
		"price" BIGINT NOT NULL,
		"compare_price" BIGINT,
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"stock" BIGINT,
		"sku" VARCHAR NOT NULL DEFAULT '',
		"is_featured" BOOLEAN NOT NULL DEFAULT false,
		"settings" VARCHAR NOT NULL DEFAULT '{}',
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_id) REFERENCES stores (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "store_items_store_id_created_at_idx" ON "store_items" ("store_id", "created_at")`,
	`CREATE INDEX "store_items_app_id_is_featured_idx" ON "store_items" ("app_id", "is_featured")`,
	`CREATE TABLE "store_item_media" (
		"store_item_id" VARCHAR NOT NULL,
		"media_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"position" BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY ("store_item_id", "media_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE,
		FOREIGN KEY (media_id) REFERENCES media (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "store_item_tags" (
		"store_item_id" VARCHAR NOT NULL,
		"tag_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		PRIMARY KEY ("store_item_id", "tag_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE,
		FOREIGN KEY (tag_id) REFERENCES tags (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "variants" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_item_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"value" VARCHAR NOT NULL,
		"price_adjustment" BIGINT NOT NULL DEFAULT 0,
		"stock" BIGINT,
		"position" BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "variants_store_item_id_idx" ON "variants" ("store_item_id")`,
	`CREATE TABLE "subscription_plans" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_item_id" VARCHAR NOT NULL,
		"billing_cycle" VARCHAR NOT NULL,
		PRIMARY KEY ("id"),
		UNIQUE ("store_item_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "subscriptions" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"plan_id" VARCHAR NOT NULL,
		"status" VARCHAR NOT NULL,
		"current_period_end" TIMESTAMPTZ NOT NULL,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
		FOREIGN KEY (plan_id) REFERENCES subscription_plans (id)
	)`,
	`CREATE INDEX "subscriptions_app_id_user_id_idx" ON "subscriptions" ("app_id", "user_id")`,
	`CREATE TABLE "carts" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"status" VARCHAR NOT NULL DEFAULT 'ACTIVE',
		"expires_at" TIMESTAMPTZ NOT NULL,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_id) REFERENCES stores (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "carts_store_id_user_id_status_idx" ON "carts" ("store_id", "user_id", "status")`,
	`CREATE TABLE "cart_items" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"cart_id" VARCHAR NOT NULL,
		"store_item_id" VARCHAR NOT NULL,
		"variant_id" VARCHAR,
		"quantity" BIGINT NOT NULL,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (cart_id) REFERENCES carts (id) ON DELETE CASCADE,
		FOREIGN KEY (store_item_id) REFERENCES store_items (id) ON DELETE CASCADE,
		FOREIGN KEY (variant_id) REFERENCES variants (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "cart_items_cart_id_idx" ON "cart_items" ("cart_id")`,
	`CREATE TABLE "orders" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"store_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"order_number" VARCHAR NOT NULL,
		"status" VARCHAR NOT NULL,
		"subtotal" BIGINT NOT NULL,
		"platform_fee" BIGINT NOT NULL DEFAULT 0,
		"total" BIGINT NOT NULL,
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"payment_method" VARCHAR NOT NULL DEFAULT '',
		"payment_ref" VARCHAR NOT NULL DEFAULT '',
		"shipping_address" VARCHAR NOT NULL DEFAULT '',
		"notes" VARCHAR NOT NULL DEFAULT '',
		"tracking_number" VARCHAR NOT NULL DEFAULT '',
		"refund_reason" VARCHAR NOT NULL DEFAULT '',
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"shipped_at" TIMESTAMPTZ,
		"delivered_at" TIMESTAMPTZ,
		"cancelled_at" TIMESTAMPTZ,
		"refunded_at" TIMESTAMPTZ,
		PRIMARY KEY ("id"),
		UNIQUE ("order_number"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (store_id) REFERENCES stores (id),
		FOREIGN KEY (user_id) REFERENCES users (id)
	)`,
	`CREATE INDEX "orders_store_id_user_id_created_at_idx" ON "orders" ("store_id", "user_id", "created_at")`,
	`CREATE TABLE "order_items" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"order_id" VARCHAR NOT NULL,
		"store_item_id" VARCHAR NOT NULL,
		"variant_id" VARCHAR,
		"name" VARCHAR NOT NULL,
		"type" VARCHAR NOT NULL,
		"quantity" BIGINT NOT NULL,
		"price" BIGINT NOT NULL,
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"custom_options" VARCHAR NOT NULL DEFAULT '{}',
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE
	)`,
	`CREATE INDEX "order_items_order_id_idx" ON "order_items" ("order_id")`,
	`CREATE TABLE "events" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"creator_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"description" VARCHAR NOT NULL DEFAULT '',
		"location" VARCHAR NOT NULL DEFAULT '',
		"start_date" TIMESTAMPTZ NOT NULL,
		"end_date" TIMESTAMPTZ NOT NULL,
		"type" VARCHAR NOT NULL DEFAULT 'MEETUP',
		"is_featured" BOOLEAN NOT NULL DEFAULT false,
		"is_official" BOOLEAN NOT NULL DEFAULT false,
		"banner_media_id" VARCHAR,
		"settings" VARCHAR NOT NULL DEFAULT '{}',
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (creator_id) REFERENCES users (id)
	)`,
	`CREATE INDEX "events_app_id_start_date_idx" ON "events" ("app_id", "start_date")`,
	`CREATE TABLE "event_media" (
		"event_id" VARCHAR NOT NULL,
		"media_id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"position" BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY ("event_id", "media_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE,
		FOREIGN KEY (media_id) REFERENCES media (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "attendees" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"event_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"role" VARCHAR NOT NULL,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		CONSTRAINT "attendee_event_user" UNIQUE ("event_id", "user_id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "notifications" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"sender_id" VARCHAR,
		"content" VARCHAR NOT NULL,
		"read_at" TIMESTAMPTZ,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
		FOREIGN KEY (sender_id) REFERENCES users (id) ON DELETE SET NULL
	)`,
	`CREATE INDEX "notifications_app_id_user_id_created_at_idx" ON "notifications" ("app_id", "user_id", "created_at")`,
	`CREATE TABLE "push_subscriptions" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"endpoint" VARCHAR NOT NULL,
		"p256dh" VARCHAR NOT NULL,
		"auth" VARCHAR NOT NULL,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		PRIMARY KEY ("id"),
		CONSTRAINT "push_app_endpoint" UNIQUE ("app_id", "endpoint"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "donations" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"user_id" VARCHAR NOT NULL,
		"amount" BIGINT NOT NULL,
		"currency" VARCHAR NOT NULL DEFAULT 'USD',
		"message" VARCHAR NOT NULL DEFAULT '',
		"status" VARCHAR NOT NULL DEFAULT 'PENDING',
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
		"processed_at" TIMESTAMPTZ,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE,
		FOREIGN KEY (user_id) REFERENCES users (id)
	)`,
	`CREATE TABLE "donation_tiers" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"name" VARCHAR NOT NULL,
		"required_amount" BIGINT NOT NULL,
		"description" VARCHAR NOT NULL DEFAULT '',
		"position" BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	)`,
	`CREATE TABLE "links" (
		"id" VARCHAR NOT NULL,
		"app_id" VARCHAR NOT NULL,
		"title" VARCHAR NOT NULL,
		"url" VARCHAR NOT NULL,
		"icon" VARCHAR NOT NULL DEFAULT '',
		"enabled" BOOLEAN NOT NULL,
		"position" BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY ("id"),
		FOREIGN KEY (app_id) REFERENCES apps (id) ON DELETE CASCADE
	)`,
}

// initialTables is the drop order for the down migration: children first.
var initialTables = []string{
	"links", "donation_tiers", "donations", "push_subscriptions", "notifications",
	"attendees", "event_media", "events", "order_items", "orders", "cart_items", "carts",
	"subscriptions", "subscription_plans", "variants", "store_item_tags", "store_item_media",
	"store_items", "stores", "message_tags", "tags", "reactions", "message_attachments",
	"messages", "media", "communities", "memberships", "sessions", "apps", "users", "secrets",
}

func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		return execAll(ctx, db, "initial schema", initialSchema...)
	}, func(ctx context.Context, db *bun.DB) error {
		for _, name := range initialTables {
			if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS "`+name+`"`); err != nil {
				return fmt.Errorf("drop table %s: %w", name, err)
			}
		}
		return nil
	})
}
