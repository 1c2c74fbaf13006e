package analyzer_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer"
)

// procset holds process-local sets reached through helpers and pointers (ONCE003):
// main's sync.Map passed by pointer to a handler's helper that checks then stores before
// an email, and a dedupe set's Seen, a limiter's Allow and dedupe.FirstTime (another
// package, through their facts) deciding an email, are reported; the same helpers in
// front of a keyed send, a set made for one batch or one call, and a pool whose value
// the effect uses are not.
var procset = []string{"procset/dedupe", "procset/notify"}

func TestChecks_SetsThroughHelpers(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, all(analyzer.Analyzers), procset...)
}

// recorder collects what analysistest would report as test failures.
type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
