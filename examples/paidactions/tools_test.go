package paidactions

import (
	"strings"
	"testing"

	"github.com/oncekit/once/examples/internal/toolcheck"
)

// oncegen -check: once_gen.go and the migrations are what the directives produce today.
// oncegen verify finds every constraint the guards rely on in a database migrated from
// empty, as the command migrates it.
func TestOncegen_CheckIsCleanAndVerifyFindsEveryConstraint(t *testing.T) {
	t.Parallel()
	toolcheck.Generated(t, ".", Migrate)
}

// oncelint finds nothing in the editor, and in the naive editor exactly its two bugs, on
// the lines its source marks: the check-then-insert claim and the idempotency key made
// afresh for every attempt.
func TestOncelint_AppIsCleanNaiveHasTheStorysBugs(t *testing.T) {
	t.Parallel()
	found := toolcheck.Lint(t, ".")
	if len(found) != 2 {
		t.Fatalf("%d findings, want the story's 2", len(found))
	}
	for i, about := range []string{"insert into paid_actions is decided by a read of paid_actions", "naive.requestID, which returns rand.Text"} {
		if !strings.Contains(found[i].Message, about) {
			t.Errorf("%s: %q, want it to be about %q", found[i], found[i].Message, about)
		}
	}
}
