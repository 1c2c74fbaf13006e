package generator

import (
	"go/token"
	"slices"
	"strings"
	"testing"
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
		{` go run github.com/oncekit/once/cmd/oncegen@v0.3.0 -migrations m`, []string{"-migrations", "m"}},
		{` go run -mod=mod github.com/oncekit/once/cmd/oncegen -v`, []string{"-v"}},
		{` oncegen -migrations "db dir" -tags "a b"`, []string{"-migrations", "db dir", "-tags", "a b"}},
		{` /usr/local/bin/oncegen -migrations $ONCE_TEST_DIR`, []string{"-migrations", "db/migrations"}},
		{` go tool oncegen -migrations ${GOPACKAGE}_migrations -tags $GOFILE$DOLLAR`, []string{"-migrations", "app_migrations", "-tags", "gen.go$"}},
		{` go tool stringer -type=Kind`, nil},
		{` go run ./cmd/other -migrations m`, nil},
		{` go tool oncegenerate -migrations m`, nil},
	} {
		words, err := splitGenerate(c.text, pos, "app")
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		args, ok := oncegenArgs(words)
		if ok != (c.args != nil) || !slices.Equal(args, c.args) {
			t.Errorf("%q: oncegen %v with %q, want %v with %q", c.text, ok, args, c.args != nil, c.args)
		}
	}
	for _, bad := range []string{` go tool oncegen -tags "a b`, ` go tool oncegen -tags "a\qb"`} {
		if _, err := splitGenerate(bad, pos, "app"); err == nil || !strings.HasPrefix(err.Error(), "/m/app/gen.go:7:1: //go:generate: ") {
			t.Errorf("%q: error %v, want one at the line", bad, err)
		}
	}
}
