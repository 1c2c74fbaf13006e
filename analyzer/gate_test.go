package analyzer_test

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer"
	"github.com/oncekit/once/analyzer/internal/effects"
)

// gates holds a dedupe gate (ONCE003): the first action of a chain answers "go on" only
// for a message ID its go-cache, read and written through methods behind an interface of
// another package, has not seen, and a later action calls the model. The same shape keyed
// by a user, a cache of translations (the write stores a value), a counter map and a
// gate beside a database claim are not reported. A package-level go-cache checked then
// written with a marker before a model call is reported; one storing the model's answer
// (a cache of values) is not.
var gates = []string{"procset/msgcache", "procset/bot"}

func TestChecks_DedupeGates(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, all(analyzer.Analyzers), gates...)
}

// TestChecks_DedupeGatesOff is the negative control: with the gates switched off the
// expected finding is missing, so the case above can fail. Not parallel: it switches a
// package setting that the parallel tests, which wait for it, read.
func TestChecks_DedupeGatesOff(t *testing.T) {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	restore := effects.SetGatesForTest(false)
	defer restore()
	var r recorder
	analysistest.Run(&r, dir, all(analyzer.Analyzers), gates...)
	missing := false
	for _, e := range r.errs {
		if strings.Contains(e, "no diagnostic was reported") && strings.Contains(e, "is the only guard of") {
			missing = true
		}
	}
	if !missing {
		t.Fatalf("with the gates off the gate's finding should be missing; got %q", r.errs)
	}
}
