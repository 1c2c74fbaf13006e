package ideas

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
)

// goRun runs a command of this module (go run ../../cmd/NAME args...) in this directory and
// returns its output and exit code.
func goRun(t *testing.T, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "../../cmd/" + name}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("go run ../../cmd/%s: %v", name, err)
	}
	return out.String(), errb.String(), 0
}

// oncegen -check: once_gen.go and the migrations are what the declarations produce today,
// and oncegen verify finds every constraint the guards rely on in a database the app has
// migrated.
func TestOncegen_CheckIsCleanAndVerifyFindsEveryConstraint(t *testing.T) {
	t.Parallel()
	if out, errs, code := goRun(t, "oncegen", "-check", "-migrations", "migrations", "."); code != 0 {
		t.Fatalf("oncegen -check exited %d: run go generate\n%s%s", code, out, errs)
	}

	db := pgtest.NewDatabase(t)
	if err := Migrate(context.Background(), db.Pool(t, 2)); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := goRun(t, "oncegen", "verify", "-db", db.URL, "."); code != 0 {
		t.Fatalf("oncegen verify exited %d\n%s%s", code, out, errs)
	}
}

// finding is one oncelint diagnostic: its code and file:line, relative to this directory.
type finding struct{ code, pos string }

// oncelint -json over the app and its naive twin: the app has no finding, and the twin has
// exactly the story's bugs, each on the line marked with its code in a comment.
func TestOncelint_AppIsCleanNaiveHasTheStorysBugs(t *testing.T) {
	t.Parallel()
	out, errs, code := goRun(t, "oncelint", "-json", ".", "./naive")
	if code != 0 {
		t.Fatalf("oncelint -json exited %d\n%s", code, errs)
	}
	// {"package": {"analyzer": [{"category": "ONCE001", "posn": "file:line:col", ...}]}}
	var report map[string]map[string][]struct {
		Category string `json:"category"`
		Posn     string `json:"posn"`
		Message  string `json:"message"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("reading oncelint -json: %v\n%s", err, out)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]finding{} // by package, test variants folded in
	for pkg, byCheck := range report {
		pkg, _, _ = strings.Cut(pkg, " ")
		for _, diags := range byCheck {
			for _, d := range diags {
				file, line := splitPosn(d.Posn)
				rel, err := filepath.Rel(wd, file)
				if err != nil {
					t.Fatal(err)
				}
				f := finding{d.Category, filepath.ToSlash(rel) + ":" + line}
				if !slices.Contains(got[pkg], f) {
					got[pkg] = append(got[pkg], f)
					t.Logf("%s: %s", f.pos, d.Message)
				}
			}
		}
	}

	if app := got["github.com/oncekit/once/examples/ideas"]; len(app) > 0 {
		t.Errorf("the app has findings: %v", app)
	}
	naive := got["github.com/oncekit/once/examples/ideas/naive"]
	want := markedFindings(t, "naive")
	if len(want) != 3 {
		t.Fatalf("found %d marked bugs in naive/, want 3 (ONCE001, ONCE002, ONCE005): %v", len(want), want)
	}
	less := func(a, b finding) int { return strings.Compare(a.pos+a.code, b.pos+b.code) }
	slices.SortFunc(naive, less)
	slices.SortFunc(want, less)
	if !slices.Equal(naive, want) {
		t.Errorf("oncelint on naive/:\n got  %v\n want %v", naive, want)
	}
}

// splitPosn splits "file:line:col" into the file and the line.
func splitPosn(posn string) (file, line string) {
	i := strings.LastIndex(posn, ":")
	j := strings.LastIndex(posn[:i], ":")
	return posn[:j], posn[j+1 : i]
}

// markedFindings lists the lines of dir's Go files (tests aside) that end with a comment
// naming the code oncelint must report there: "// ONCE005: why".
func markedFindings(t *testing.T, dir string) []finding {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	mark := regexp.MustCompile(`// (ONCE00\d): `)
	var list []finding
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if m := mark.FindStringSubmatch(line); m != nil {
				list = append(list, finding{m[1], filepath.ToSlash(f) + ":" + strconv.Itoa(i+1)})
			}
		}
	}
	return list
}
