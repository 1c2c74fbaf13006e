package once005_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/once005"
	"github.com/oncekit/once/internal/checktest"
)

// app is a module of its own (its go.mod marks the root where the schema is read).
func TestSQL(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once005.Analyzer, "app/exists", "app/locks", "app/store", "app/service", "app/claims", "app/counter", "app/consume", "app/debits", "app/declared", "app/dbtx", "app/names", "app/startup", "app/repoiface")
}

// ormshop is a module of its own (its go.mod marks the root where the schema is read:
// migrations/0001_init.sql, db/schema.sql, ent/schema/user.go). Its packages build
// check-then-insert with each ORM.
func TestORMs(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once005.Analyzer, "ormshop/gormapp", "ormshop/gormv1app", "ormshop/xormapp", "ormshop/sqlxapp", "ormshop/entapp", "ormshop/bunapp", "ormshop/entsvc", "ormshop/builders")
}

// The facts say what each function sends, for its callers in other packages.
func TestFacts(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once005.Facts, "app/repo")
}
