package directive_test

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/directive"
)

// FuzzParseFile feeds arbitrary directive lines to the parser. It must never panic; every
// error must point inside the directive's line; and whatever it accepts must yield SQL
// with nothing a directive could inject (no statement separator, comment or stray quote).
// The seed corpus is in testdata/fuzz/FuzzParseFile.
func FuzzParseFile(f *testing.F) {
	for _, seed := range []string{
		"//once:forever key=u.ID",
		"//once:open table=jobs columns=dedupe_key status=status open=pending,running",
		"//once:statement key=org,day cap=100 n=units",
		`//once:provider "key=pair(a, b)" prefix=x`,
		"//once:lease key=j ttl=10s wait=1s",
		"//once:forver key=",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n\r") || !strings.HasPrefix(line, "//") {
			return
		}
		src := "package p\n\n" + line + "\nfunc F(ctx context.Context, u U) error { return nil }\n"
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "a.go", src, parser.ParseComments)
		if err != nil {
			return
		}
		ds, errs := directive.ParseFile(fset, file)
		for _, e := range errs {
			if e.Position.Line != 3 {
				t.Fatalf("error outside the directive's line: %v", e)
			}
			if !strings.HasPrefix(e.Error(), "a.go:3:") {
				t.Fatalf("error does not print file:line:col: %q", e.Error())
			}
		}
		for _, d := range ds {
			if len(d.IndexName()) > directive.MaxIdentLen {
				t.Fatalf("index name over 63 bytes: %q", d.IndexName())
			}
			for _, sql := range []string{d.IndexDef(), d.ConflictClause()} {
				if strings.ContainsAny(sql, ";\"\\") || strings.Contains(sql, "--") || strings.Contains(sql, "/*") {
					t.Fatalf("emitted SQL holds a separator, comment or quote: %q", sql)
				}
				if strings.Count(sql, "'")%2 != 0 {
					t.Fatalf("emitted SQL has an unbalanced quote: %q", sql)
				}
			}
			if d.Name == "" {
				t.Fatal("accepted directive without a guard name")
			}
		}
	})
}
