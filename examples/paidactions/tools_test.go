package paidactions

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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
	findings := oncelint(t, "./...")
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

// oncelint runs the oncelint command (-json, tests included, as go vet sees them) on
// patterns and returns its findings, each once, sorted by file and line. It runs the
// command rather than linttest.Run: in a test binary built with -race, as CI builds it,
// type-checking every dependency in process is several times slower (78 s against 17 s
// here on a loaded 2-core machine), and the command finds the same.
func oncelint(t *testing.T, patterns ...string) []linttest.Finding {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "github.com/oncekit/once/cmd/oncelint", "-json"}, patterns...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oncelint: %v\n%s", err, stderr.Bytes())
	}
	// {"package [variant]": {"once005": [{"category": "ONCE005", "posn": "file:line:col", "message": ...}]}}
	var report map[string]map[string][]struct {
		Category, Posn, Message string
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("oncelint -json: %v\n%s", err, out)
	}
	seen := map[linttest.Finding]bool{}
	var findings []linttest.Finding
	for _, byCheck := range report {
		for _, diags := range byCheck {
			for _, d := range diags {
				// posn is file:line:col; a file name may hold colons, so parse from the end.
				parts := strings.Split(d.Posn, ":")
				if len(parts) < 3 {
					t.Fatalf("oncelint -json: position %q", d.Posn)
				}
				line, err := strconv.Atoi(parts[len(parts)-2])
				if err != nil {
					t.Fatalf("oncelint -json: position %q", d.Posn)
				}
				f := linttest.Finding{Code: d.Category, File: filepath.Base(strings.Join(parts[:len(parts)-2], ":")), Line: line, Message: d.Message}
				if !seen[f] { // a package and its test variant report the same finding
					seen[f] = true
					findings = append(findings, f)
				}
			}
		}
	}
	slices.SortFunc(findings, func(a, b linttest.Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Code, b.Code))
	})
	return findings
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
