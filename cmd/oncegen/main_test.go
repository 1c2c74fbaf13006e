package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
)

// oncegenBin is the command built once for the tests that run it as a user would.
var oncegenBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "oncegen-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	oncegenBin = filepath.Join(dir, "oncegen")
	if out, err := exec.Command("go", "build", "-o", oncegenBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building oncegen: %v\n%s", err, out)
		return 1
	}
	return pgtest.Main(m)
}

// repoRoot is the root of the once module.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// newModule makes a module in a temporary directory that uses this checkout of once, with
// files (relative path → content) in it.
func newModule(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	root := repoRoot(t)
	gomod := fmt.Sprintf(`module example.com/e2e

go 1.26.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/oncekit/once v0.0.0-00010101000000-000000000000
)

replace github.com/oncekit/once => %s
`, root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"go.mod": gomod, "go.sum": string(sum)}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Let the go command complete go.mod's indirect requirements from the module cache.
	if out, err := goCmd(dir, "mod", "tidy").CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	return dir
}

// copyTree reads the files under dir (relative to the repository root) into a map for
// newModule, under prefix.
func copyTree(t testing.TB, dir, prefix string) map[string]string {
	t.Helper()
	files := map[string]string{}
	base := filepath.Join(repoRoot(t), dir)
	err := filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, path)
		files[filepath.Join(prefix, rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func goCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	return cmd
}

// oncegen runs the built command in dir and returns its exit code, stdout and stderr.
func oncegen(t testing.TB, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(oncegenBin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running oncegen: %v", err)
	}
	return code, stdout.String(), stderr.String()
}

// psql runs one SQL file against url, stopping at the first error.
func psql(url, file string) ([]byte, error) {
	return exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", file).CombinedOutput()
}

// psqlCommand runs one SQL command against url; a query's rows come back bare (-tA).
func psqlCommand(url, sql string) ([]byte, error) {
	return exec.Command("psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql).CombinedOutput()
}

// filesWith returns the sorted names in dir ending with suffix.
func filesWith(t testing.TB, dir, suffix string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
