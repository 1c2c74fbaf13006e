package tally_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/oncekit/once/examples/internal/tally"
)

// recorder is a test that keeps its failures instead of failing.
type recorder struct {
	*testing.T
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestTable_ShowsCheckedCountsAligned(t *testing.T) {
	t.Parallel()
	r := &recorder{T: t}
	tab := tally.New(r, "Never paying twice", "ideas", "naive")
	tab.Scene("32 presses at once")
	tab.Row("runs created", tally.Is(1, 1), tally.Is(32, 32))
	tab.Row("the abandoned run says", tally.Is("failed", "failed"), tally.Is("researching", "researching"))
	tab.Scene("a press while the lock is held elsewhere")
	tab.Row("runs", tally.Is(0, 0), tally.None())
	if len(r.errors) != 0 {
		t.Fatalf("counts equal to the expected ones failed the test: %q", r.errors)
	}
	want := `Never paying twice

                            ideas         naive
32 presses at once
  runs created                  1            32
  the abandoned run says   failed   researching
a press while the lock is held elsewhere
  runs                          0             -
`
	if got := tab.String(); got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
}

// A count that is not the expected one fails the test as it is entered, naming the scene,
// the row and the column, and the table shows both numbers.
func TestRow_ACountThatDiffersFailsTheTest(t *testing.T) {
	t.Parallel()
	r := &recorder{T: t}
	tab := tally.New(r, "story", "app", "naive")
	tab.Scene("32 presses at once")
	tab.Row("runs created", tally.Is(1, 1), tally.Is(31, 32))
	tab.Row("plan changes", tally.Is(1, 1), tally.AtLeast(32, 2))
	tab.Row("emails", tally.Is(1, 1), tally.AtLeast(1, 2))
	want := []string{"32 presses at once: runs created, naive: counted 31, want 32", "32 presses at once: emails, naive: counted 1, want at least 2"}
	if fmt.Sprint(r.errors) != fmt.Sprint(want) {
		t.Fatalf("failures %q, want %q", r.errors, want)
	}
	if got, row := tab.String(), "  runs created     1          31 (want 32)\n"; !strings.Contains(got, row) {
		t.Fatalf("table:\n%s\nwant a row %q", got, row)
	}
}
