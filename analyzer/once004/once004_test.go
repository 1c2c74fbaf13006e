package once004_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/once004"
	"github.com/oncekit/once/internal/checktest"
)

// Direct calls of a declared method, here and from another package (through its fact),
// are reported and rewritten to the wrapper with the DB in scope; the wrapper's own call
// and the test's are not.
func TestOnce004(t *testing.T) {
	t.Parallel()
	checktest.Fix(t, "testdata", once004.Analyzer, "welcome", "signup")
}
