// Package checktest runs an oncelint check's analysistest cases beside the stubs of the
// SDKs and frameworks every check's cases use (analyzer/testdata/src), so that each check
// keeps only its own cases in its testdata/src.
package checktest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"
)

// Run copies the stubs and dir/src into a GOPATH of the test's own and runs analysistest
// there on the patterns.
func Run(t *testing.T, dir string, a *analysis.Analyzer, patterns ...string) []*analysistest.Result {
	t.Helper()
	return analysistest.Run(t, GOPATH(t, dir), a, patterns...)
}

// Fix is Run that also checks the suggested fixes against the .golden files.
func Fix(t *testing.T, dir string, a *analysis.Analyzer, patterns ...string) []*analysistest.Result {
	t.Helper()
	return analysistest.RunWithSuggestedFixes(t, GOPATH(t, dir), a, patterns...)
}

// GOPATH returns a GOPATH of the test's own holding the stubs and dir/src, for a test that
// runs analysistest itself.
func GOPATH(t *testing.T, dir string) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	stubs := filepath.Join(filepath.Dir(self), "..", "..", "analyzer", "testdata", "src")
	gopath := t.TempDir()
	for _, from := range []string{stubs, filepath.Join(dir, "src")} {
		if err := os.CopyFS(filepath.Join(gopath, "src"), os.DirFS(from)); err != nil {
			t.Fatal(err)
		}
	}
	return gopath
}
