package reports_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The tools run as a user runs them, from this package's directory: go generate's oncegen
// in -check mode, and oncelint -json.

func TestOncegenCheckIsClean(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "run", "../../cmd/oncegen", "-check", "-migrations", "migrations", "-format", "migrate", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("oncegen -check: %v\n%s", err, out)
	}
}

// finding is one oncelint diagnostic, by file, line and code.
type finding struct {
	File string
	Line int
	Code string
}

// marked is the naive app's bugs, as its source marks them: a "// ONCEnnn: why" comment
// at the end of the line oncelint must point at.
var marked = regexp.MustCompile(`// (ONCE\d{3}): `)

func TestOncelintFindsTheNaiveBugsAndNothingInTheApp(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "run", "../../cmd/oncelint", "-json", ".", "./cmd/reports", "./naive")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oncelint: %v\n%s", err, out)
	}
	// -json prints {package: {analyzer: [{posn, category, message}]}}.
	var report map[string]map[string][]struct {
		Posn     string `json:"posn"`
		Category string `json:"category"`
		Message  string `json:"message"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("oncelint -json: %v\n%s", err, out)
	}
	got := map[string][]finding{}
	for pkg, byCheck := range report {
		for _, ds := range byCheck {
			for _, d := range ds {
				// posn is file:line:col.
				parts := strings.Split(d.Posn, ":")
				line, _ := strconv.Atoi(parts[len(parts)-2])
				f := finding{File: filepath.Base(strings.Join(parts[:len(parts)-2], ":")), Line: line, Code: d.Category}
				got[pkg] = append(got[pkg], f)
				t.Logf("%s:%d: %s", f.File, f.Line, d.Message)
			}
		}
	}
	for _, pkg := range []string{"github.com/oncekit/once/examples/reports", "github.com/oncekit/once/examples/reports/cmd/reports"} {
		if fs := got[pkg]; len(fs) != 0 {
			t.Errorf("%s has findings: %+v", pkg, fs)
		}
	}

	want := markedFindings(t, "naive/naive.go")
	if len(want) < 4 {
		t.Fatalf("naive.go marks %d bugs, want at least the four of the story", len(want))
	}
	naive := got["github.com/oncekit/once/examples/reports/naive"]
	cmp := func(a, b finding) int { return a.Line - b.Line }
	slices.SortFunc(naive, cmp)
	if !slices.Equal(naive, want) {
		t.Errorf("oncelint on naive:\n got %+v\nwant %+v", naive, want)
	}
}

func markedFindings(t *testing.T, path string) []finding {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []finding
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if m := marked.FindStringSubmatch(sc.Text()); m != nil {
			want = append(want, finding{File: filepath.Base(path), Line: line, Code: m[1]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}
