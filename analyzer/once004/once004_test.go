package once004_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer/once004"
)

// Direct calls of a declared method, in its package and from another (through the
// guarded fact), are reported and rewritten to the generated wrapper with the DB in scope;
// the wrapper's own call and the test's are not reported.
func TestONCE004_BypassedGuards(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.RunWithSuggestedFixes(t, dir, once004.Analyzer, "shop/welcome", "shop/signup")
}
