package generator_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oncekit/once/generator"
)

// tempModule writes a module example.com/m with files and returns its directory.
func tempModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.26.0\n"
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// An import the go command cannot resolve stops loading, at the import, with the go
// command's reason.
func TestLoad_AnImportThatCannotBeFoundIsAnErrorAtTheImport(t *testing.T) {
	t.Parallel()
	dir := tempModule(t, map[string]string{"p/p.go": `package p

import (
	"context"

	"example.com/m/nowhere"
)

// F does one thing.
//
//once:forever key=id
func F(ctx context.Context, id nowhere.ID) error { return nil }
`})
	_, err := generator.Load(generator.LoadConfig{Dir: dir, Patterns: []string{"./..."}})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "p", "p.go")+":6:2: ") || !strings.Contains(err.Error(), "example.com/m/nowhere") {
		t.Fatalf("load: %v; want an error at p.go:6:2 naming the import", err)
	}
}

// A package using cgo is loaded through the go command, which prepares its files, and
// generates as any other.
func TestLoad_ACgoPackageGenerates(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler: cgo cannot be used here")
	}
	dir := tempModule(t, map[string]string{"p/p.go": `package p

// int twice(int x) { return 2 * x; }
import "C"

import "context"

// Double doubles a number once for ever.
//
//once:forever key=n
func Double(ctx context.Context, n int) (int, error) { return int(C.twice(C.int(n))), nil }
`})
	pkgs, err := generator.Load(generator.LoadConfig{Dir: dir, Env: append(os.Environ(), "CGO_ENABLED=1")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := generator.Generate(pkgs)
	if err != nil {
		t.Fatal(err)
	}
	src := string(res.Files[filepath.Join(dir, "p", generator.FileName)])
	if !strings.Contains(src, "func DoubleOnce(ctx context.Context, db once.DB, n int) (int, once.Outcome, error)") {
		t.Fatalf("generated:\n%s", src)
	}
}
