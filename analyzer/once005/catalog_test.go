package once005

import (
	"testing"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// The embedded catalogue reads whole: every library, every end with a kind it knows.
func TestCatalog_ReadsEveryEnd(t *testing.T) {
	t.Parallel()
	if len(libraries) != 5 || len(rowsTypes) == 0 || len(pure) == 0 || len(serializable) == 0 || len(duplicate) == 0 {
		t.Fatalf("catalog.json read %d libraries and %d, %d, %d, %d names; want 5 libraries and some of each", len(libraries), len(rowsTypes), len(pure), len(serializable), len(duplicate))
	}
	for _, lib := range libraries {
		for key, e := range lib.ends {
			if e.kind < 0 || e.kind > sqlfacts.Update || e.kind == sqlfacts.Other && e.flags&fText == 0 {
				t.Errorf("%s %s: kind %d, flags %b: want read, insert, update or text", lib.name, key, e.kind, e.flags)
			}
		}
	}
	if !libraryPaths["gorm.io/gorm"] || !libraryPaths["entgo.io/ent"] || libraryPaths[""] {
		t.Errorf("libraryPaths = %v, want gorm's and ent's", libraryPaths)
	}
}
