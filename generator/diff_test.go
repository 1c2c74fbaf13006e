package generator_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/oncekit/once/generator"
)

// A changed line reads as in diff -u and git: the removed line before the added one, with
// three lines of context, and a missing file as an empty one.
func TestUnifiedDiff_StandardOrder(t *testing.T) {
	t.Parallel()
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	b := "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n"
	want := "--- a/f\n+++ b/f\n@@ -1,7 +1,7 @@\n one\n two\n three\n-four\n+FOUR\n five\n six\n seven\n"
	if got := generator.UnifiedDiff("a/f", "b/f", []byte(a), []byte(b)); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := generator.UnifiedDiff("a", "b", []byte(a), []byte(a)); got != "" {
		t.Errorf("equal files: %q", got)
	}
	got := generator.UnifiedDiff("/dev/null", "b/f", nil, []byte("x\ny\n"))
	if want := "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"; got != want {
		t.Errorf("a new file:\n%s\nwant:\n%s", got, want)
	}
}

func lines(n int, change int) []byte {
	var b strings.Builder
	for i := range n {
		if i == change {
			fmt.Fprintf(&b, "changed line %d\n", i)
			continue
		}
		fmt.Fprintf(&b, "\tline %d of a generated file, with some text on it\n", i)
	}
	return []byte(b.String())
}

// BenchmarkUnifiedDiff_8000Lines is -check's diff of an 8,000-line generated file with one
// line changed: what a CI run prints for a stale file.
func BenchmarkUnifiedDiff_8000Lines(b *testing.B) {
	old, cur := lines(8000, -1), lines(8000, 4000)
	b.ReportAllocs()
	for b.Loop() {
		if d := generator.UnifiedDiff("a", "b", old, cur); !strings.Contains(d, "+changed line 4000") {
			b.Fatal(d)
		}
	}
}

// BenchmarkUnifiedDiff_8000LinesRewritten: every tenth line changed, the diff's hard case.
func BenchmarkUnifiedDiff_8000LinesRewritten(b *testing.B) {
	old := lines(8000, -1)
	cur := []byte(strings.ReplaceAll(string(old), "0 of a generated", "0 of a regenerated"))
	b.ReportAllocs()
	for b.Loop() {
		if d := generator.UnifiedDiff("a", "b", old, cur); d == "" {
			b.Fatal("no diff")
		}
	}
}
