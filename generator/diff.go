package generator

import (
	"fmt"

	"github.com/aymanbagabas/go-udiff"
)

// UnifiedDiff returns the unified diff (3 lines of context) that turns a into b, labelled
// with the two names, or "" when they are equal. A missing file is passed as nil.
//
// The diff is go-udiff's, a copy of the Go tools' own line diff: hunks in the standard order
// (a change's removed lines before its added ones), and a bounded amount of work on large
// files (see BenchmarkUnifiedDiff_8000Lines), where a textbook longest-common-subsequence
// table grows with the product of the two files' lengths.
func UnifiedDiff(aName, bName string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	old := string(a)
	out, err := udiff.ToUnified(aName, bName, old, udiff.Lines(old, string(b)), udiff.DefaultContextLines)
	if err != nil {
		// The edits come from the same two texts: they cannot fail to apply.
		return fmt.Sprintf("--- %s\n+++ %s\n(no diff: %v)\n", aName, bName, err)
	}
	return out
}
