package lintmarks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/oncekit/once/examples/internal/lintmarks"
	"github.com/oncekit/once/internal/linttest"
)

func TestMarked_ReadsEachMarkWithItsLine(t *testing.T) {
	t.Parallel()
	got, err := lintmarks.Marked("testdata/marked")
	if err != nil {
		t.Fatal(err)
	}
	if s := linttest.Strings(got); len(s) != 1 || s[0] != "marked.go:18: ONCE001" {
		t.Fatalf("marks %q, want marked.go:18: ONCE001", s)
	}
}

func TestCheck_MarkedFindingsPass(t *testing.T) {
	t.Parallel()
	found := lintmarks.Check(t, "testdata/marked")
	if len(found) != 1 || !strings.Contains(found[0].Message, "Post") {
		t.Fatalf("findings %+v, want the one unkeyed POST", found)
	}
}

// recorder is a test that keeps its failures instead of failing.
type recorder struct {
	*testing.T
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// A mark left on the wrong line fails the check: the finding oncelint reports is not where
// the source says it is.
func TestCheck_AMarkOnTheWrongLineFails(t *testing.T) {
	t.Parallel()
	r := &recorder{T: t}
	lintmarks.Check(r, "testdata/moved")
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], `got ["moved.go:18: ONCE001"]`) || !strings.Contains(r.errors[0], `want ["moved.go:17: ONCE001"]`) {
		t.Fatalf("failures %q, want one naming both lines", r.errors)
	}
}
