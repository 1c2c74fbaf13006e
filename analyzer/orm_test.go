package analyzer_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer"
)

// ormshop is a module of its own (its go.mod marks the root where ONCE005 looks for
// schema files: migrations/0001_init.sql, db/schema.sql, ent/schema/user.go). Its
// packages build check-then-insert with each ORM oncelint reads.
var ormshop = []string{
	// ONCE005 through gorm: a First, a Count and a locked First of invites deciding a
	// Create, FirstOrCreate alone, and a Raw read of the table a model's TableName (in
	// another package, through a fact) names are reported. A unique index in the
	// migrations, uniqueIndex tags, a parent row locked with clause.Locking or the
	// gorm:query_option, clause.OnConflict, a handled gorm.ErrDuplicatedKey and a read
	// that only copies a value are not.
	"ormshop/gormapp",
}

func TestChecks_ORMs(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, all(analyzer.Analyzers), ormshop...)
}
