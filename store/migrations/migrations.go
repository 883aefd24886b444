// Package migrations holds the schema changes, applied in order at start.
//
// Migration files are frozen: once a migration is committed, databases have
// run it and will never run it again, so editing it only makes fresh
// databases differ from existing ones. Every later change, including one that
// follows a model change, is a new file named YYYYMMDDHHMMSS_name.go (the
// timestamp orders them and is the id bun records). Write its SQL out rather
// than building it from the store models, which keep changing after the
// migration has run, and make it work on PostgreSQL and SQLite alike: write
// it in PostgreSQL's types and run it with execAll, which translates them
// for SQLite (switch on db.Dialect().Name() only where the SQL differs
// otherwise). store's schema test fails when a freshly migrated database no
// longer matches the models, and TestMigrationStatementsAreFrozen when a
// committed migration sends other SQL than it did.
package migrations

import "github.com/uptrace/bun/migrate"

// Migrations is filled by the init functions of the timestamped files beside this one.
var Migrations = migrate.NewMigrations()
