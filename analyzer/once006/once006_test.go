package once006_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/internal/checktest"
	"github.com/oncekit/once/analyzer/once006"
)

func TestOnce006(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once006.Analyzer, "lengths")
}
