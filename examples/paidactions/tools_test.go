package paidactions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// -test=false: the promises are the app's; its tests call declared functions directly
	// on purpose (negative controls), which ONCE004 allows in _test.go files anyway.
	cmd := exec.Command("go", "run", "./cmd/oncelint", "-test=false", "-json", "./examples/paidactions/...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oncelint: %v\n%s", err, stderr.Bytes())
	}
	// {"package [test variant]": {"once005": [{"posn": "file:line:col", "message": ...}]}}
	var report map[string]map[string][]struct {
		Posn    string `json:"posn"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("oncelint -json: %v\n%s", err, out)
	}
	var got []string
	for _, byCheck := range report {
		for _, findings := range byCheck {
			for _, f := range findings {
				posn := f.Posn
				if rel, err := filepath.Rel(root, posn); err == nil {
					posn = rel
				}
				// Drop the column: the line is what names the bug.
				posn = posn[:strings.LastIndex(posn, ":")]
				got = append(got, posn+" "+f.Message[strings.LastIndex(f.Message, "(")+1:len(f.Message)-1])
			}
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	want := []string{
		"examples/paidactions/naive/naive.go:" + lineOf(t, "naive/naive.go", "err = s.DB.QueryRow(ctx, `INSERT INTO paid_actions") + " ONCE005",
		"examples/paidactions/naive/worker.go:" + lineOf(t, "naive/worker.go", `req.Header.Set("Idempotency-Key", requestID())`) + " ONCE002",
	}
	if !slices.Equal(got, want) {
		t.Errorf("oncelint findings:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
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
