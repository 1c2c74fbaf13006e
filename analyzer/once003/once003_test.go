package once003_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/once003"
	"github.com/oncekit/once/internal/checktest"
)

func TestOnce003(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once003.Analyzer, "sets")
}
