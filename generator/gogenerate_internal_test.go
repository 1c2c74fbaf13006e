package generator

import (
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// A go:generate line is split and expanded as go generate does, and only a command that runs
// oncegen yields arguments.
func TestGenerateLine_SplitsAndFindsOncegen(t *testing.T) {
	t.Setenv("ONCE_TEST_DIR", "db/migrations")
	pos := token.Position{Filename: "/m/app/gen.go", Line: 7, Column: 1}
	for _, c := range []struct {
		text string
		args []string // nil: not oncegen
	}{
		{` go tool oncegen -migrations migrations -format goose .`, []string{"-migrations", "migrations", "-format", "goose", "."}},
		{"\tgo tool oncegen", []string{}},
		{` go tool github.com/oncekit/once/cmd/oncegen -check`, []string{"-check"}},
		{` go tool -modfile=tools/go.mod oncegen -migrations m`, []string{"-migrations", "m"}},
		{` go tool -modfile tools/go.mod -modcacherw oncegen -migrations m`, []string{"-migrations", "m"}},
		{` go run github.com/oncekit/once/cmd/oncegen@v0.3.0 -migrations m`, []string{"-migrations", "m"}},
		{` go run -mod=mod github.com/oncekit/once/cmd/oncegen -v`, []string{"-v"}},
		{` go run -modfile tools/go.mod -tags tools github.com/oncekit/once/cmd/oncegen -v`, []string{"-v"}},
		{` oncegen -migrations "db dir" -tags "a b"`, []string{"-migrations", "db dir", "-tags", "a b"}},
		{` /usr/local/bin/oncegen -migrations $ONCE_TEST_DIR`, []string{"-migrations", "db/migrations"}},
		{` go tool oncegen -migrations ${GOPACKAGE}_migrations -tags $GOFILE$DOLLAR`, []string{"-migrations", "app_migrations", "-tags", "gen.go$"}},
		{` go tool oncegen -migrations $PWD/migrations`, []string{"-migrations", "/m/app/migrations"}},
		{` go tool stringer -type=Kind`, nil},
		{` go run ./cmd/other -migrations m`, nil},
		{` go run -tags oncegen ./cmd/other`, nil},
		{` go tool oncegenerate -migrations m`, nil},
		{` go tool -n oncegen -migrations m`, nil},
		{` go run -n github.com/oncekit/once/cmd/oncegen -migrations m`, nil},
	} {
		words, err := splitGenerate(c.text, pos, "app")
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		args, _, ok := oncegenArgs(words)
		if ok != (c.args != nil) || !slices.Equal(args, c.args) {
			t.Errorf("%q: oncegen %v with %q, want %v with %q", c.text, ok, args, c.args != nil, c.args)
		}
	}
	for _, bad := range []string{` go tool oncegen -tags "a b`, ` go tool oncegen -tags "a\qb"`, ` go tool oncegen -migrations "db"x .`} {
		if _, err := splitGenerate(bad, pos, "app"); err == nil || !strings.HasPrefix(err.Error(), "/m/app/gen.go:7:1: //go:generate: ") {
			t.Errorf("%q: error %v, want one at the line", bad, err)
		}
	}
}

// The lines are read as go generate reads them: from every file the build with the generate
// tag would compile or test, line by line, with the -command aliases of their file.
func TestGenerateLines_ReadsTheFilesGoGenerateReads(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"app.go":      "package app\n\n//go:generate go tool oncegen -migrations a .\n\n/*\n//go:generate oncegen -migrations in-a-comment\n*/\n\n\t//go:generate oncegen -migrations indented\n//go:generate  go tool stringer -type=K\n",
		"gen.go":      "//go:build generate\n\npackage app\n\n//go:generate -command once go tool oncegen\n//go:generate once -migrations aliased .\n",
		"other.go":    "package app\n\n//go:generate once -migrations not-aliased-here\n",
		"app_test.go": "package app\n\n//go:generate oncegen -migrations in-a-test\n",
		"ignored.go":  "//go:build never\n\npackage app\n\n//go:generate oncegen -migrations never\n",
		"main.go":     "//go:build generate\n\npackage main\n\n//go:generate go run -C .. ./cmd/oncegen -migrations $GOPACKAGE ./...\n",
		"x_test.go":   "package app_test\n\n//go:generate go tool -C=/elsewhere oncegen -migrations $GOPACKAGE\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A package of two names (main under the generate tag) is read as go generate reads it,
	// file by file.
	lines, err := GenerateLines([]*packages.Package{{Name: "app", Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		if l.Pos.Column != 1 {
			t.Errorf("%s: column %d", l.Pos, l.Pos.Column)
		}
		d := l.Dir // shown relative to the package's directory, but for the absolute -C
		if r, err := filepath.Rel(dir, l.Dir); err == nil && l.Dir != "/elsewhere" {
			d = r
		}
		got = append(got, filepath.Base(l.Pos.Filename)+":"+d+":"+strings.Join(l.Args, " "))
	}
	want := []string{
		"app.go:.:-migrations a .", "app.go:.:-migrations in-a-comment", "app_test.go:.:-migrations in-a-test",
		"gen.go:.:-migrations aliased .", "main.go:..:-migrations main ./...", "x_test.go:/elsewhere:-migrations app_test",
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}
