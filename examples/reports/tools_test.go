package reports_test

import (
	"testing"

	"github.com/oncekit/once/examples/internal/toolcheck"
	"github.com/oncekit/once/examples/reports"
)

// oncegen -check: once_gen.go and the migrations are what the declarations produce today.
// oncegen verify finds every constraint the guards rely on in a database migrated from
// empty, as the command migrates it.
func TestOncegen_CheckIsCleanAndVerifyFindsEveryConstraint(t *testing.T) {
	t.Parallel()
	toolcheck.Generated(t, ".", reports.Migrate)
}

// oncelint over the app, its command and its naive twin: nothing in the app, and in the
// twin exactly its four bugs, at the lines its source marks: the check-then-insert of the
// job (ONCE005), the worker's in-memory set (ONCE003), the model call with no key
// (ONCE001), the email keyed by the clock (ONCE002).
func TestOncelint_AppIsCleanNaiveHasTheStorysBugs(t *testing.T) {
	t.Parallel()
	if found := toolcheck.Lint(t, "."); len(found) != 4 {
		t.Errorf("%d findings, want the story's 4", len(found))
	}
}
