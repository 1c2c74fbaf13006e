package once003_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer/once003"
)

// Package-level maps, a sync.Map and a receiver's map field standing in for a promise are
// reported; a set in front of a keyed call, a record written after the effect, a
// batch-local set and a memo are not.
func TestONCE003_ProcessLocalGuards(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, once003.Analyzer, "shop/alerts")
}
