package ideas

import (
	"testing"

	"github.com/oncekit/once/examples/internal/toolcheck"
)

// oncegen -check: once_gen.go and the migrations are what the declarations produce today.
// oncegen verify finds every constraint the guards rely on in a database migrated from
// empty, as the command migrates it.
func TestOncegen_CheckIsCleanAndVerifyFindsEveryConstraint(t *testing.T) {
	t.Parallel()
	toolcheck.Generated(t, ".", Migrate)
}

// oncelint over the app, its command and its naive twin: the app has no finding, and the
// twin has exactly the story's three bugs, each on the line marked with its code.
func TestOncelint_AppIsCleanNaiveHasTheStorysBugs(t *testing.T) {
	t.Parallel()
	if found := toolcheck.Lint(t, "."); len(found) != 3 {
		t.Errorf("%d findings, want the story's 3 (ONCE001, ONCE002, ONCE005)", len(found))
	}
}
