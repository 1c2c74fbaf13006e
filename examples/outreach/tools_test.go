package outreach_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/oncekit/once/examples/internal/toolcheck"
	"github.com/oncekit/once/examples/outreach"
)

// wrapperRE finds a generated guard: func F...Once( or a method of that name.
var wrapperRE = regexp.MustCompile(`(?m)^func (\([^)]*\) )?\w+Once\(`)

// oncegen -check: once_gen.go and the migrations are what the directives produce today,
// from all sixteen of them. oncegen verify finds every constraint the guards rely on in a
// database migrated from empty, as the command migrates it.
func TestOncegen_CheckIsCleanAndVerifyFindsEveryConstraint(t *testing.T) {
	t.Parallel()
	toolcheck.Generated(t, ".", outreach.Migrate)
	// -check has just said once_gen.go is what oncegen writes: count what it wrote.
	gen, err := os.ReadFile("once_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(wrapperRE.FindAll(gen, -1)); n != 16 {
		t.Errorf("once_gen.go holds %d guards; the app declares 16", n)
	}
}

// oncelint over the app, its command and its naive twin: the findings are exactly the bugs
// the story is made of, each on a line of naive/ marked with a "// ONCEnnn: why" comment.
// The app's files carry none, so any finding in the app is an unexpected one.
func TestOncelint_AppIsCleanNaiveHasTheStorysBugs(t *testing.T) {
	t.Parallel()
	if found := toolcheck.Lint(t, "."); len(found) != 9 {
		t.Errorf("%d findings, want the story's 9 that oncelint can see", len(found))
	}
}
