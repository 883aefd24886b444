// Package migrations holds the schema changes, applied in order at start.
package migrations

import "github.com/uptrace/bun/migrate"

// Migrations is filled by the init functions of the timestamped files beside this one.
var Migrations = migrate.NewMigrations()
