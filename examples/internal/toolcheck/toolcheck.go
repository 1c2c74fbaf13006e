// Package toolcheck checks an example with the project's own tools, run as a user runs
// them: oncegen's generated files are what the declarations produce today and a database
// migrated from empty holds every constraint the guards rely on (Generated), and oncelint
// finds exactly the bugs the naive twin is written to have (Lint).
//
// A naive twin marks each bug oncelint must report with a comment at the end of the line,
// naming the code and saying why:
//
//	resp, err := http.Post(url, "application/json", body) // ONCE001: no key, a retry pays again
//
// Lint runs oncelint over the whole example and wants exactly the marked findings: each mark
// found on its line with its code, and nothing anywhere else, so the app itself (which
// carries no marks) lints clean. Moving a line of naive code moves its mark with it.
package toolcheck

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/generator"
	"github.com/oncekit/once/internal/linttest"
	"github.com/oncekit/once/internal/pgtest"
)

// markRE is a mark: "// ONCEnnn: " followed by the reason.
var markRE = regexp.MustCompile(`// (ONCE\d{3}): \S`)

// Marked returns the findings announced in the Go files under dir (tests aside), in
// linttest's order: by file, line, then code.
func Marked(dir string) ([]linttest.Finding, error) {
	var want []linttest.Finding
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			for _, m := range markRE.FindAllStringSubmatch(line, -1) {
				want = append(want, linttest.Finding{Code: m[1], File: filepath.Base(path), Line: i + 1})
			}
		}
		return nil
	})
	slices.SortFunc(want, func(a, b linttest.Finding) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), strings.Compare(a.Code, b.Code))
	})
	return want, err
}

// Lint runs oncelint over dir/... and fails t unless its findings are exactly the ones
// marked in dir's source. It returns the findings, with their messages, for the caller to
// check how many there are and what they say.
func Lint(t testing.TB, dir string) []linttest.Finding {
	t.Helper()
	want, err := Marked(dir)
	if err != nil {
		t.Fatalf("toolcheck: reading the marks: %v", err)
	}
	got := linttest.Run(t, dir, "./...")
	for _, f := range got {
		t.Logf("%s: %s", f, f.Message)
	}
	if g, w := linttest.Strings(got), linttest.Strings(want); !slices.Equal(g, w) {
		t.Errorf("oncelint's findings:\n got %q\nwant %q (the lines marked // ONCEnnn: in the source)", g, w)
	}
	return got
}

// Oncegen runs the module's oncegen (go tool oncegen args...) in dir and returns what it
// printed on stdout. It fails t with the command's output unless it exits 0: -check when a
// generated file is stale, verify when a constraint is missing.
func Oncegen(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "oncegen"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("oncegen %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

// Generated checks dir with oncegen as go generate runs it there: the generated files are
// what the declarations produce today (oncegen -check, with the arguments of the package's
// //go:generate go tool oncegen line), and a database migrated from empty by migrate, as
// the example's command migrates it, holds every constraint the guards rely on (oncegen
// verify).
func Generated(t testing.TB, dir string, migrate func(context.Context, *pgxpool.Pool) error) {
	t.Helper()
	args, err := generateArgs(dir)
	if err != nil {
		t.Fatalf("toolcheck: %v", err)
	}
	Oncegen(t, dir, append([]string{"-check"}, args...)...)
	db := pgtest.NewDatabase(t)
	if err := migrate(context.Background(), db.Pool(t, 2)); err != nil {
		t.Fatalf("toolcheck: migrating from empty: %v", err)
	}
	Oncegen(t, dir, "verify", db.URL, ".")
}

// generateArgs returns the arguments of the //go:generate line in dir's Go files that runs
// oncegen, read as go generate and oncegen -check read it (generator.GenerateLines).
func generateArgs(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	lines, err := generator.GenerateLines([]*packages.Package{{Dir: abs}})
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no %q line in %s", "//go:generate go tool oncegen", dir)
	}
	return lines[0].Args, nil
}
