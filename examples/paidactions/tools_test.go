package paidactions

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/linttest"
)

// The generated wrappers and migrations are those the directives produce today.
func TestOncegen_CheckIsClean(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "run", "github.com/oncekit/once/cmd/oncegen", "-check", "-migrations", "migrations", "-format", "sql", ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("oncegen -check: %v\n%s", err, out)
	}
}

// oncelint finds nothing in the editor, and in the naive editor exactly its two bugs: the
// check-then-insert claim and the idempotency key made afresh for every attempt.
func TestOncelint_FindsTheNaiveBugsAndNothingElse(t *testing.T) {
	t.Parallel()
	findings := linttest.Run(t, ".", "./...")
	got := linttest.Strings(findings)
	// Findings name files by base name, and the editor has a worker.go too: the messages
	// say which package each finding is about.
	want := []string{
		"naive.go:" + lineOf(t, "naive/naive.go", "err = s.DB.QueryRow(ctx, `INSERT INTO paid_actions") + ": ONCE005",
		"worker.go:" + lineOf(t, "naive/worker.go", `req.Header.Set("Idempotency-Key", requestID())`) + ": ONCE002",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("oncelint findings:\n\t%s\nwant (all in naive/, none in the editor):\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	for i, about := range []string{"insert into paid_actions is decided by a read of paid_actions", "naive.requestID, which returns rand.Text"} {
		if !strings.Contains(findings[i].Message, about) {
			t.Errorf("%s: %q, want it to be about %q", got[i], findings[i].Message, about)
		}
	}
}

// lineOf returns the number of the one line of file that contains text.
func lineOf(t *testing.T, file, text string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, text) {
			if line != "" {
				t.Fatalf("%s: %q is on more than one line", file, text)
			}
			line = fmt.Sprint(i + 1)
		}
	}
	if line == "" {
		t.Fatalf("%s: no line holds %q", file, text)
	}
	return line
}
