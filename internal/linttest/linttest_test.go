package linttest_test

import (
	"slices"
	"testing"

	"github.com/oncekit/once/internal/linttest"
)

// The fixture has one effect with no promise and one behind a declared guard: the first must
// be found, the second not, so the helper is shown able to report and to stay quiet.
func TestRun_ReportsTheFixturesFindingsOnly(t *testing.T) {
	got := linttest.Strings(linttest.Run(t, ".", "./testdata/mailer"))
	want := []string{"mailer.go:14: ONCE001"}
	if !slices.Equal(got, want) {
		t.Fatalf("findings = %q, want %q", got, want)
	}
}
