package once006_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/once006"
	"github.com/oncekit/once/internal/checktest"
)

func TestOnce006(t *testing.T) {
	t.Parallel()
	checktest.Run(t, "testdata", once006.Analyzer, "lengths")
}
