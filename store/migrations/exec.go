package migrations

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// sqliteTypes translates PostgreSQL's column types, in which migrations
// write their SQL, to SQLite's: its integers are 64-bit, it has no time
// zone type, and its byte strings are BLOBs. Every other type is spelled
// alike on both.
var sqliteTypes = strings.NewReplacer(" BIGINT", " INTEGER", " TIMESTAMPTZ", " TIMESTAMP", " BYTEA", " BLOB")

// execAll runs stmts, written in PostgreSQL's types, in order in one
// transaction (a savepoint inside the one Migrate opens per migration),
// translated with sqliteTypes on SQLite. An error names what the
// migration does and the statement that failed.
func execAll(ctx context.Context, db bun.IDB, what string, stmts ...string) error {
	return execTranslated(ctx, db, what, sqliteTypes, stmts...)
}

// execTranslated is execAll with the translation for SQLite given (a
// migration whose SQLite SQL kept one of PostgreSQL's types).
func execTranslated(ctx context.Context, db bun.IDB, what string, sqlite *strings.Replacer, stmts ...string) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, stmt := range stmts {
			if tx.Dialect().Name() == dialect.SQLite {
				stmt = sqlite.Replace(stmt)
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w\n%s", what, err, stmt)
			}
		}
		return nil
	})
}
