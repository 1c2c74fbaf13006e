package once006_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer/once006"
)

// A request promise or guard around a paid model call or a charge is reported, one around
// a read is not; a table= insert without the declared clause is reported, one through the
// generated constant is not.
func TestONCE006_WrongLengths(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, once006.Analyzer, "shop/jobs")
}
