package main_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// -lowmem checks each package in a process of its own (as go vet does) and reports what
// the standalone driver reports, in each output form.
func TestLowMem_SameFindingsAsStandalone(t *testing.T) {
	t.Parallel()
	want, code := run(t, "app", oncelint, "-catalog=oncelint.json", "./...")
	if code != 3 {
		t.Fatalf("standalone: exit %d, want 3\n%s", code, want)
	}
	got, code := run(t, "app", oncelint, "-lowmem", "-catalog=oncelint.json", "./...")
	if code != 3 {
		t.Fatalf("-lowmem: exit %d, want 3\n%s", code, got)
	}
	// A related place in another package is known to go vet's per-package processes from
	// export data, which keeps its line but not its column.
	related := regexp.MustCompile(`^(.*:\d+):\d+: \t`)
	lines := func(s string) []string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		for i := range l {
			l[i] = related.ReplaceAllString(l[i], "$1: \t")
		}
		slices.Sort(l)
		return l
	}
	if !slices.Equal(lines(got), lines(want)) {
		t.Errorf("-lowmem:\n%s\nstandalone:\n%s", got, want)
	}
	sarif, code := run(t, "app", oncelint, "-lowmem", "-sarif", "-catalog=oncelint.json", "./...")
	if code != 3 {
		t.Fatalf("-lowmem -sarif: exit %d, want 3\n%s", code, sarif)
	}
	checkSARIFShape(t, []byte(sarif))
}
