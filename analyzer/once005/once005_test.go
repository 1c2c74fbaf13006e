package once005_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer/once005"
)

// Counting open runs and then inserting is reported, also under FOR UPDATE of the runs
// themselves; a parent row lock, an advisory lock, a serializable transaction, a
// transaction promise and an ON CONFLICT insert are not.
func TestONCE005_CheckThenInsert(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, once005.Analyzer, "shop/runs")
}
