package once005

import (
	"slices"
	"testing"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// The embedded catalogue reads whole: every library, every end with a kind it knows.
func TestCatalog_ReadsEveryEnd(t *testing.T) {
	t.Parallel()
	if len(libraries) != 8 || len(rowsNext) == 0 || len(pure) == 0 || len(serializable) == 0 || len(duplicate) == 0 || len(tableMethods) == 0 || len(linkRoles) == 0 || len(clauseRoles) == 0 || len(renders) == 0 {
		t.Fatalf("catalog.json read %d libraries and %d, %d, %d, %d, %d, %d, %d, %d names; want 8 libraries and some of each", len(libraries), len(rowsNext), len(pure), len(serializable), len(duplicate), len(tableMethods), len(linkRoles), len(clauseRoles), len(renders))
	}
	for name, part := range parts {
		if !slices.Contains([]string{"select", "columns", "insert", "update", "delete", "from", "where", "values", "set", "setmap", "prefix", "suffix", "dest", "handle"}, part) {
			t.Errorf("parts: %s writes %q, a part the reader does not know", name, part)
		}
	}
	for _, lib := range libraries {
		for key, e := range lib.ends {
			if e.kind > sqlfacts.Delete || e.kind == sqlfacts.Other && e.flags&fText == 0 {
				t.Errorf("%s %s: kind %d, flags %b: want read, insert, update, delete or text", lib.name, key, e.kind, e.flags)
			}
		}
	}
	for name, role := range linkRoles {
		if !slices.Contains(roles, role) {
			t.Errorf("links: %s plays %q, a role the reader does not know", name, role)
		}
	}
	for name, role := range clauseRoles {
		if role != roleLock && role != roleIgnore {
			t.Errorf("clauses: %s plays %q; want lock or ignore", name, role)
		}
	}
	if !libraryPaths["gorm.io/gorm"] || !libraryPaths["entgo.io/ent"] || libraryPaths[""] {
		t.Errorf("libraryPaths = %v, want gorm's and ent's", libraryPaths)
	}
}
