package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A guarded function renamed and given a new parameter, then its parameter's type changed
// (which breaks the build at the stale file's compile-time guard), then its directive
// removed: each time go generate alone, as a user runs it, brings the module back to a
// build that passes. Each package has its own //go:generate line, and go generate runs a's
// before z's although a calls z's wrapper: a's run does not stop at the use of a wrapper
// z's run is about to write, or at z's stale file.
func TestGoGenerate_RenameNewParameterAndRemovedDirectiveRegenerate(t *testing.T) {
	t.Parallel()
	const z = `package z

import "context"

//go:generate go tool oncegen

// Notify tells a user.
//
//once:forever key=id
func Notify(ctx context.Context, id string) error { return nil }
`
	const a = `package a

import (
	"context"

	once "github.com/oncekit/once/runtime"

	"example.com/e2e/z"
)

//go:generate go tool oncegen

// Run runs a user's job once per episode, and tells the user.
//
//once:episode key=id
func Run(ctx context.Context, db once.DB, id string) error {
	_, err := z.NotifyOnce(ctx, db, id)
	return err
}

// Start is how the package's callers reach Run: through its guard.
func Start(ctx context.Context, db once.DB, id string) error {
	_, err := RunOnce(ctx, db, db, id)
	return err
}
`
	mod := newModule(t, map[string]string{"z/z.go": z, "a/a.go": a})
	if out, err := goCmd(mod, "mod", "edit", "-tool=github.com/oncekit/once/cmd/oncegen").CombinedOutput(); err != nil {
		t.Fatalf("go mod edit -tool: %v\n%s", err, out)
	}
	if out, err := goCmd(mod, "mod", "tidy").CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(mod, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	generateAndBuild := func(step string) {
		t.Helper()
		if out, err := goCmd(mod, "generate", "./...").CombinedOutput(); err != nil {
			t.Fatalf("%s: go generate: %v\n%s", step, err, out)
		}
		if out, err := goCmd(mod, "build", "./...").CombinedOutput(); err != nil {
			t.Fatalf("%s: the module does not build after go generate: %v\n%s", step, err, out)
		}
	}
	generated := func(pkg string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mod, pkg, "once_gen.go"))
		if err != nil {
			t.Fatalf("%s's generated file: %v", pkg, err)
		}
		return string(b)
	}
	generateAndBuild("first generation")

	// Renamed, with a new parameter, and its caller changed to match.
	z2 := strings.Replace(z, "func Notify(ctx context.Context, id string)", "func NotifyUser(ctx context.Context, id string, urgent bool)", 1)
	write("z/z.go", z2)
	write("a/a.go", strings.Replace(a, "z.NotifyOnce(ctx, db, id)", "z.NotifyUserOnce(ctx, db, id, true)", 1))
	generateAndBuild("renamed, with a new parameter")
	if src := generated("z"); !strings.Contains(src, "func NotifyUserOnce(ctx context.Context, db once.DB, id string, urgent bool)") || strings.Contains(src, "NotifyOnce") {
		t.Fatalf("after the rename, z's generated file:\n%s", src)
	}

	// The parameter's type changed, the name kept: the stale file's compile-time guard is
	// what breaks the build, until go generate.
	write("z/z.go", strings.Replace(z2, "id string, urgent bool", "id int64, urgent bool", 1))
	write("a/a.go", strings.Replace(a, "z.NotifyOnce(ctx, db, id)", "z.NotifyUserOnce(ctx, db, int64(len(id)), true)", 1))
	out, err := goCmd(mod, "build", "./...").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "once_gen.go") || !strings.Contains(string(out), "NotifyUser") {
		t.Fatalf("before go generate, the stale file's guard does not break the build: %v\n%s", err, out)
	}
	generateAndBuild("a parameter's type changed")

	// The directive removed, and the caller calling the function itself: z's generated file
	// goes.
	write("z/z.go", strings.Replace(strings.Replace(z2, "//\n//once:forever key=id\n", "", 1), "id string, urgent bool", "id int64, urgent bool", 1))
	write("a/a.go", strings.Replace(a, "_, err := z.NotifyOnce(ctx, db, id)", "err := z.NotifyUser(ctx, int64(len(id)), true)", 1))
	generateAndBuild("the directive removed")
	if _, err := os.Stat(filepath.Join(mod, "z", "once_gen.go")); !os.IsNotExist(err) {
		t.Errorf("z's generated file is still there after its only directive was removed: %v", err)
	}
	if src := generated("a"); !strings.Contains(src, "func RunOnce(") {
		t.Errorf("a's generated file lost its wrapper:\n%s", src)
	}
}
