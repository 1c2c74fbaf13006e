package analyzer_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer"
	"github.com/oncekit/once/internal/checktest"
)

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
	dir := checktest.GOPATH(t, filepath.Join("once005", "testdata"))
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
	dir := checktest.GOPATH(t, filepath.Join("once005", "testdata"))
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
