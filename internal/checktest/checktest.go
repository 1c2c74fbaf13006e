// Package checktest runs an oncelint check's analysistest cases beside the stubs of the
// SDKs and frameworks every check's cases use (analyzer/testdata/src), so that each check
// keeps only its own cases in its testdata/src.
package checktest

import (
	"io/fs"
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
	return analysistest.Run(t, gopath(t, dir), a, patterns...)
}

// Fix is Run that also checks the suggested fixes against the .golden files.
func Fix(t *testing.T, dir string, a *analysis.Analyzer, patterns ...string) []*analysistest.Result {
	t.Helper()
	return analysistest.RunWithSuggestedFixes(t, gopath(t, dir), a, patterns...)
}

func gopath(t *testing.T, dir string) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	stubs := filepath.Join(filepath.Dir(self), "..", "..", "analyzer", "testdata", "src")
	gopath := t.TempDir()
	for _, from := range []string{stubs, filepath.Join(dir, "src")} {
		if err := copyTree(from, filepath.Join(gopath, "src")); err != nil {
			t.Fatal(err)
		}
	}
	return gopath
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}
