package outreach_test

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/oncekit/once/examples/outreach"
	"github.com/oncekit/once/generator"
	"github.com/oncekit/once/internal/linttest"
	"github.com/oncekit/once/internal/pgtest"
)

// TestOncegen_CheckIsClean is oncegen -check -migrations migrations -format migrate . run
// in-process: once_gen.go and the migrations are what the directives produce today.
func TestOncegen_CheckIsClean(t *testing.T) {
	t.Parallel()
	pkgs, err := generator.Load(generator.LoadConfig{Dir: ".", Patterns: []string{"."}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := generator.Generate(pkgs)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := res.Stale()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stale {
		t.Errorf("%s is stale: run go generate\n%s", s.Path, generator.UnifiedDiff("a", "b", s.Old, s.New))
	}
	if len(res.Guards) < 16 {
		t.Errorf("oncegen found %d guards; the app declares 16", len(res.Guards))
	}
	objs, err := generator.Objects(res.Guards)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := generator.ReadSnapshot("migrations")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := generator.Diff(snap, res.Guards, objs, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range plan.Steps {
		t.Errorf("migration due: %s: run go generate\n%s", st.Title, strings.Join(st.Up, "\n"))
	}

	// And the database the app migrates has every constraint the guards rely on.
	db := pgtest.New(t)
	if err := outreach.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	problems, err := generator.Verify(context.Background(), db, objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("verify: %+v", p)
	}
}

// TestOncelint_AppIsCleanNaiveHasTheStorysBugs runs every oncelint check over the app and
// its naive twin together (one load): the findings are exactly the bugs the story is made
// of, each on a line of naive/ that carries a "// ONCEnnn: why" comment. The app's files
// carry none, so any finding in the app is an unexpected one.
func TestOncelint_AppIsCleanNaiveHasTheStorysBugs(t *testing.T) {
	t.Parallel()
	got := linttest.Run(t, ".", ".", "./naive")
	for _, f := range got {
		t.Logf("%s: %s", f, f.Message)
	}
	want := wantedFindings(t, "naive")
	if len(want) < 8 {
		t.Fatalf("found %d // ONCEnnn: comments in naive/; the story has 8 bugs oncelint can see", len(want))
	}
	if g := linttest.Strings(got); !slices.Equal(g, want) {
		t.Errorf("findings on the app and naive/:\n got %q\nwant %q (all in naive/)", g, want)
	}
}

var wantRE = regexp.MustCompile(`// (ONCE\d{3}): `)

// wantedFindings reads the findings a directory's files announce, in linttest's order and
// form: a line ending in a "// ONCEnnn: why" comment expects that finding on that line.
func wantedFindings(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var want []linttest.Finding
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			for _, m := range wantRE.FindAllStringSubmatch(line, -1) {
				want = append(want, linttest.Finding{Code: m[1], File: filepath.Base(f), Line: i + 1})
			}
		}
	}
	slices.SortFunc(want, func(a, b linttest.Finding) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.Line-b.Line, strings.Compare(a.Code, b.Code))
	})
	return linttest.Strings(want)
}
