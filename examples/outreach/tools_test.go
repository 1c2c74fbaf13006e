package outreach_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/oncekit/once/examples/outreach"
	"github.com/oncekit/once/generator"
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

// finding is one oncelint diagnostic, as the test compares them.
type finding struct {
	Code string
	Pos  string // file:line, the file relative to this directory
}

// TestOncelint_AppIsCleanNaiveHasTheStorysBugs runs the oncelint command, as go vet's tool,
// over the app and its naive twin: the app has no finding, and the twin has exactly the
// bugs the story is made of, each on the line that carries a "// ONCEnnn: why" comment.
func TestOncelint_AppIsCleanNaiveHasTheStorysBugs(t *testing.T) {
	t.Parallel()
	tool := filepath.Join(t.TempDir(), "oncelint")
	if out, err := exec.Command("go", "build", "-o", tool, "github.com/oncekit/once/cmd/oncelint").CombinedOutput(); err != nil {
		t.Fatalf("building oncelint: %v\n%s", err, out)
	}
	// go vet caches each package's facts and findings, so a second run costs little. With
	// -json it reports findings as JSON and exits 0; anything else is a failure.
	out, err := exec.Command("go", "vet", "-vettool="+tool, "-json", ".", "./naive").CombinedOutput()
	if err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
	got := map[string][]finding{}
	abs, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(dropComments(out)))
	for dec.More() {
		var byPkg map[string]map[string][]struct {
			Category, Posn, Message string
		}
		if err := dec.Decode(&byPkg); err != nil {
			t.Fatalf("reading go vet's JSON: %v\n%s", err, out)
		}
		for pkg, byCheck := range byPkg {
			for _, ds := range byCheck {
				for _, d := range ds {
					file, line := splitPosn(d.Posn)
					rel, _ := filepath.Rel(abs, file)
					got[pkg] = append(got[pkg], finding{Code: d.Category, Pos: filepath.ToSlash(rel) + ":" + line})
					t.Logf("%s:%s: %s", rel, line, d.Message)
				}
			}
		}
	}
	if app := got["github.com/oncekit/once/examples/outreach"]; len(app) > 0 {
		t.Errorf("the app has findings: %v", app)
	}
	want := wantedFindings(t, "naive")
	if len(want) < 8 {
		t.Fatalf("found %d // ONCEnnn: comments in naive/; the story has 8 bugs oncelint can see", len(want))
	}
	naive := got["github.com/oncekit/once/examples/outreach/naive"]
	cmp := func(a, b finding) int { return strings.Compare(a.Pos+a.Code, b.Pos+b.Code) }
	slices.SortFunc(naive, cmp)
	slices.SortFunc(want, cmp)
	if !slices.Equal(naive, want) {
		t.Errorf("naive's findings:\n got %v\nwant %v", naive, want)
	}
}

// dropComments removes the "# package" lines go vet prints between JSON objects.
func dropComments(b []byte) []byte {
	var out []byte
	for line := range bytes.Lines(b) {
		if !bytes.HasPrefix(line, []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// splitPosn splits "file:line:col" into the file and the line.
func splitPosn(posn string) (file, line string) {
	i := strings.LastIndex(posn, ":")
	j := strings.LastIndex(posn[:i], ":")
	return posn[:j], posn[j+1 : i]
}

var wantRE = regexp.MustCompile(`// (ONCE\d{3}): `)

// wantedFindings reads the findings a directory's files announce: a line ending in a
// "// ONCEnnn: why" comment expects that finding on that line.
func wantedFindings(t *testing.T, dir string) []finding {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var want []finding
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			for _, m := range wantRE.FindAllStringSubmatch(line, -1) {
				want = append(want, finding{Code: m[1], Pos: fmt.Sprintf("%s:%d", filepath.ToSlash(f), i+1)})
			}
		}
	}
	return want
}
