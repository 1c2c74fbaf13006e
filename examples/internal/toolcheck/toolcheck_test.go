package toolcheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/oncekit/once/examples/internal/toolcheck"
	"github.com/oncekit/once/internal/linttest"
)

func TestMarked_ReadsEachMarkWithItsLine(t *testing.T) {
	t.Parallel()
	got, err := toolcheck.Marked("testdata/marked")
	if err != nil {
		t.Fatal(err)
	}
	if s := linttest.Strings(got); len(s) != 1 || s[0] != "marked.go:18: ONCE001" {
		t.Fatalf("marks %q, want marked.go:18: ONCE001", s)
	}
}

func TestLint_MarkedFindingsPass(t *testing.T) {
	t.Parallel()
	found := toolcheck.Lint(t, "testdata/marked")
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

// Fatalf records the failure and stops the check, as testing's does.
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(r)
}

// run calls check with r, stopping where a Fatalf would.
func (r *recorder) run(check func()) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	check()
}

// A mark left on the wrong line fails the check: the finding oncelint reports is not where
// the source says it is.
func TestLint_AMarkOnTheWrongLineFails(t *testing.T) {
	t.Parallel()
	r := &recorder{T: t}
	toolcheck.Lint(r, "testdata/moved")
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], `got ["moved.go:18: ONCE001"]`) || !strings.Contains(r.errors[0], `want ["moved.go:17: ONCE001"]`) {
		t.Fatalf("failures %q, want one naming both lines", r.errors)
	}
}

// Oncegen passes when the command exits 0, and fails the test with the command's output
// when it does not.
func TestOncegen_FailsWithTheCommandsOutput(t *testing.T) {
	t.Parallel()
	toolcheck.Oncegen(t, "testdata/marked", "-check", ".")
	r := &recorder{T: t}
	toolcheck.Oncegen(r, "testdata/marked", "verify")
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "give the database with -db DSN") {
		t.Fatalf("failures %q, want oncegen's complaint", r.errors)
	}
}

// Generated reads oncegen's arguments from the package's go:generate line, so the check runs
// oncegen exactly as go generate does; a package without one is an error.
func TestGenerated_WantsTheGoGenerateLine(t *testing.T) {
	t.Parallel()
	r := &recorder{T: t}
	r.run(func() { toolcheck.Generated(r, "testdata/marked", nil) })
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], `no "//go:generate go tool oncegen" line in testdata/marked`) {
		t.Fatalf("failures %q, want the missing line named", r.errors)
	}
}
