package once002_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer/once002"
)

// Keys from uuid, the clock, crypto/rand and a helper in another package are reported;
// keys from ids, a row's UpdatedAt, a period parameter, a key persisted on the row or
// scanned back from it, the provider guard's key and a name-based UUID are not.
func TestONCE002_KeysThatCannotSurviveARetry(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, once002.Analyzer, "shop/ids", "shop/payments")
}
