package migrations

import "testing"

// bun records a migration by its timestamp alone: two files with one
// timestamp (easy when work is merged from branches) would make a database
// that ran one of them skip the other for good.
func TestMigrationIDsAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, m := range Migrations.Sorted() {
		if other, ok := seen[m.Name]; ok {
			t.Errorf("migrations %s_%s and %s_%s share the id %s: give the newer file a later timestamp", m.Name, other, m.Name, m.Comment, m.Name)
		}
		seen[m.Name] = m.Comment
	}
	if len(seen) < 10 {
		t.Fatalf("only %d migrations registered", len(seen))
	}
}
