package once002_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/once002"
	"github.com/oncekit/once/internal/checktest"
)

func TestOnce002(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once002.Analyzer, "keys")
}
