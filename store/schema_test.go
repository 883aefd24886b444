package store_test

import (
	"context"
	"database/sql"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"marquee/store"
	"marquee/store/storetest"
)

type column struct {
	typ     string
	notNull bool
	pk      bool
	dflt    sql.NullString
}

// schema maps table name to column name to column, as the database reports it.
type schema map[string]map[string]column

// Migrations are frozen SQL while models keep changing, so this checks that a
// freshly migrated database still has every column the models read and write,
// on both databases the product runs on.
func TestSchemaMatchesModels(t *testing.T) {
	t.Parallel()
	schemas := map[dialect.Name]schema{}
	storetest.Both(t, func(t *testing.T, db *bun.DB) {
		s := readSchema(t, db)
		schemas[db.Dialect().Name()] = s
		for _, model := range store.Models() {
			checkModel(t, db, s, model)
		}
	})

	pg, lite := schemas[dialect.PG], schemas[dialect.SQLite]
	if pg == nil || lite == nil {
		return // a subtest already failed
	}
	pgCols, liteCols := columnList(pg), columnList(lite)
	for _, c := range pgCols {
		if !slices.Contains(liteCols, c) {
			t.Errorf("PostgreSQL has %s, SQLite does not", c)
		}
	}
	for _, c := range liteCols {
		if !slices.Contains(pgCols, c) {
			t.Errorf("SQLite has %s, PostgreSQL does not", c)
		}
	}
}

func checkModel(t *testing.T, db *bun.DB, s schema, model any) {
	table := db.Dialect().Tables().Get(reflect.TypeOf(model).Elem())
	cols, ok := s[table.Name]
	if !ok {
		t.Errorf("%s: no table %s", table.TypeName, table.Name)
		return
	}
	fields := map[string]bool{}
	for _, f := range table.Fields {
		fields[f.Name] = true
		c, ok := cols[f.Name]
		switch {
		case !ok:
			t.Errorf("%s.%s: no column %s.%s", table.TypeName, f.GoName, table.Name, f.Name)
			continue
		case canonicalType(c.typ) != canonicalType(f.CreateTableSQLType):
			t.Errorf("%s.%s: column %s.%s is %s, the model wants %s", table.TypeName, f.GoName, table.Name, f.Name, c.typ, f.CreateTableSQLType)
		case c.notNull != f.NotNull:
			t.Errorf("%s.%s: column %s.%s NOT NULL is %v, the model says %v", table.TypeName, f.GoName, table.Name, f.Name, c.notNull, f.NotNull)
		case c.pk != f.IsPK:
			t.Errorf("%s.%s: column %s.%s primary key is %v, the model says %v", table.TypeName, f.GoName, table.Name, f.Name, c.pk, f.IsPK)
		}
		// bun inserts DEFAULT for a zero value of a field with a default, so
		// the column must really have that default.
		if f.SQLDefault != "" && canonicalDefault(c.dflt.String) != canonicalDefault(f.SQLDefault) {
			t.Errorf("%s.%s: column %s.%s defaults to %q, the model says %q", table.TypeName, f.GoName, table.Name, f.Name, c.dflt.String, f.SQLDefault)
		}
	}
	for name, c := range cols {
		if !fields[name] && c.notNull && !c.dflt.Valid {
			t.Errorf("%s: column %s.%s is NOT NULL without a default and has no field, so inserts fail", table.TypeName, table.Name, name)
		}
	}
}

// A model that Models leaves out would never be checked above.
func TestModelsListsEveryModel(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, m := range store.Models() {
		listed[reflect.TypeOf(m).Elem().Name()] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if st, ok := spec.Type.(*ast.StructType); ok && embedsBaseModel(st) && !listed[spec.Name.Name] {
				t.Errorf("%s: %s embeds bun.BaseModel but store.Models does not list it", fset.Position(spec.Pos()), spec.Name.Name)
			}
			return true
		})
	}
}

func embedsBaseModel(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if sel, ok := f.Type.(*ast.SelectorExpr); ok && len(f.Names) == 0 && sel.Sel.Name == "BaseModel" {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "bun" {
				return true
			}
		}
	}
	return false
}

// The bookkeeping tables of bun's migrator are not ours and differ by dialect.
var migratorTables = []string{"bun_migrations", "bun_migration_locks"}

func readSchema(t *testing.T, db *bun.DB) schema {
	t.Helper()
	query := `SELECT m.name, p.name, p.type, p."notnull", p.dflt_value, p.pk > 0
		FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite%'
			-- FTS5 search indexes (SQLite only) and their shadow tables are
			-- no model's table; the PostgreSQL side has no counterpart.
			AND m.sql NOT LIKE 'CREATE VIRTUAL TABLE%'
			AND m.name NOT IN (SELECT name FROM pragma_table_list WHERE type = 'shadow')`
	if db.Dialect().Name() == dialect.PG {
		query = `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO', c.column_default,
			EXISTS (SELECT 1 FROM information_schema.table_constraints tc
				JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name, table_name)
				WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = c.table_schema
					AND tc.table_name = c.table_name AND k.column_name = c.column_name)
			FROM information_schema.columns c WHERE c.table_schema = current_schema()`
	}
	rows, err := db.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	defer rows.Close()
	s := schema{}
	for rows.Next() {
		var table, name string
		var c column
		if err := rows.Scan(&table, &name, &c.typ, &c.notNull, &c.dflt, &c.pk); err != nil {
			t.Fatalf("read schema: %v", err)
		}
		if slices.Contains(migratorTables, table) {
			continue
		}
		if s[table] == nil {
			s[table] = map[string]column{}
		}
		s[table][name] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read schema: %v", err)
	}
	return s
}

// columnList gives "table.column NOT NULL" lines, what both dialects must agree on.
func columnList(s schema) []string {
	var out []string
	for table, cols := range s {
		for name, c := range cols {
			line := table + "." + name
			if c.notNull {
				line += " NOT NULL"
			}
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// typeNames folds the spellings bun writes and the databases report into one.
// Widths stay distinct: an int64 field in an integer column would overflow.
var typeNames = map[string]string{
	"character varying":           "text",
	"varchar":                     "text",
	"timestamp with time zone":    "timestamptz",
	"timestamp without time zone": "timestamp",
	"bool":                        "boolean",
	"int8":                        "bigint",
	// A serial is an integer whose default is a sequence.
	"bigserial": "bigint",
	"int":       "integer",
	"int4":      "integer",
	"int2":      "smallint",
	"float8":    "double precision",
	"float4":    "real",
}

var typeLength = regexp.MustCompile(`\(.*\)$`)

func canonicalType(typ string) string {
	typ = strings.ToLower(strings.TrimSpace(typeLength.ReplaceAllString(typ, "")))
	if name, ok := typeNames[typ]; ok {
		return name
	}
	return typ
}

// PostgreSQL reports defaults with casts ('USD'::character varying) and
// keywords in upper case (CURRENT_TIMESTAMP).
var defaultCast = regexp.MustCompile(`(::[a-z ]+)+$`)

func canonicalDefault(d string) string {
	d = defaultCast.ReplaceAllString(strings.TrimSpace(d), "")
	if !strings.HasPrefix(d, "'") {
		d = strings.ToLower(d)
	}
	return d
}
