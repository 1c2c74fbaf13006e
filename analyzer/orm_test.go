package analyzer_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
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
	// ONCE005 through xorm (tables named in singular snake case): Get and Exist deciding
	// Insert are reported; a parent row under ForUpdate and a unique xorm tag are not.
	// A seat keyed by (owner, name) is not reported where the name comes from the input
	// (a parameter, a decoded body, a constructor keeping it, a batch built from it), and
	// is where it is a UUID, the clock's (through another package's constructor) or a
	// random draw on one path; an autoincrement key and a hook that draws the key are
	// reported. In gormapp, an integer key counts only where the function sets it. A pin
	// keyed by a board the call just inserted (directly, or through a slice's pointers)
	// is not reported; one looked up by user alone is.
	"ormshop/xormapp",
	// ONCE005 through sqlx: an unguarded count deciding an Exec is reported; a unique
	// constraint in db/schema.sql and a parent row FOR UPDATE are not.
	"ormshop/sqlxapp",
	// ONCE005 through an ent client: Exist and Only deciding Create().Save are reported;
	// OnConflict().Ignore(), a handled IsConstraintError and a field Unique() in the ent
	// schema are not.
	"ormshop/entapp",
	// ONCE005 through bun (table from the bun tag): Exists deciding NewInsert is
	// reported; On("CONFLICT ..."), a parent row For("UPDATE") and unique tags are not.
	"ormshop/bunapp",
}

func TestChecks_ORMs(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, once005Of(analyzer.Analyzers), ormshop...)
}

// recorder collects what analysistest would report as test failures.
type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// A unique constraint in a file no usual place holds is read when -schema names it
// (relative to the module root): ormshop/custom's check-then-create on products is then
// safe. Without the flag the same package is reported.
func TestSchemaFlag_NamesAConstraintFile(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	named := analyzer.New(&analyzer.Config{Schemas: []string{"deploy/products.ddl"}})
	analysistest.Run(t, dir, once005Of(named), "ormshop/custom")

	var without recorder
	analysistest.Run(&without, dir, once005Of(analyzer.Analyzers), "ormshop/custom")
	if len(without.errs) != 1 || !strings.Contains(without.errs[0], "unexpected diagnostic: insert into products is decided by a read of products") {
		t.Errorf("without -schema, want one report of the insert into products; got %q", without.errs)
	}
}

// A -schema name that does not exist is an error naming it, not a silent empty schema.
func TestSchemaFlag_MissingFileIsAnError(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	analysistest.Run(&rec, dir, once005Of(analyzer.New(&analyzer.Config{Schemas: []string{"deploy/missing.sql"}})), "ormshop/custom")
	if len(rec.errs) == 0 || !strings.Contains(strings.Join(rec.errs, "\n"), "deploy/missing.sql") {
		t.Errorf("want an error naming deploy/missing.sql; got %q", rec.errs)
	}
}

// once005Of returns ONCE005 among checks: these cases are its own.
func once005Of(checks []*analysis.Analyzer) *analysis.Analyzer {
	for _, a := range checks {
		if a.Name == "once005" {
			return a
		}
	}
	return nil
}
