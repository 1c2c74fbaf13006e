package once005

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// textSrc gives each case's text as the argument of exec in a function of its own.
const textSrc = `package p

import "fmt"

var prefix string

func exec(q string) {}

func tenant(t string) string { return fmt.Sprintf("%s%s", prefix, t) }

func pick(t string) string {
	if t == "" {
		return "a"
	}
	return t
}

func wide(a, b, c, d string) string { return a + b + c + d }

func Prefixed()  { exec("SELECT id FROM " + tenant("tags") + " WHERE name = ?") }
func Percent()   { exec(fmt.Sprintf("SELECT 100%% FROM %s LIMIT %d", tenant("t"), 5)) }
func Unknown(t string) { exec("INSERT INTO " + t + " (id) VALUES (?)") }
func Missing()   { exec(fmt.Sprintf("SELECT %s, %s FROM t", "a")) }
func Branches()  { exec("SELECT * FROM " + pick("x")) }
func Long()      { exec("SELECT " + prefix + "a" + ", " + prefix + "b" + ", " + "c" + ", " + "d" + " FROM " + "t" + " WHERE " + "a = ?") }
func Wide(s string) {
	q := wide(s, s, s, s)
	q = wide(q, q, q, q)
	q = wide(q, q, q, q)
	q = wide(q, q, q, q)
	q = wide(q, q, q, q)
	q = wide(q, q, q, q)
	q = wide(q, q, q, q)
	q = wide(q, q, q, q)
	exec(q)
}
`

// TestText reads the text each case gives exec: prefixes read at run time left out before a
// name, parts not known written 0, %% kept, a helper with two returns not followed, and a
// text that would visit more values than the budget cut short.
func TestText(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", textSrc, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{Importer: importer.Default()}, fset, types.NewPackage("p", "p"), []*ast.File{f}, ssa.SanityCheckFunctions)
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{pass: &analysis.Pass{Pkg: pkg.Pkg}}
	arg := func(fn string) ssa.Value {
		for _, b := range pkg.Func(fn).Blocks {
			for _, ins := range b.Instrs {
				if c, ok := ins.(*ssa.Call); ok && c.Call.StaticCallee() == pkg.Func("exec") {
					return c.Call.Args[0]
				}
			}
		}
		t.Fatalf("%s: no call of exec", fn)
		return nil
	}
	for _, c := range []struct {
		fn, want string
		known    bool
	}{
		{"Prefixed", "SELECT id FROM tags WHERE name = ?", true},
		{"Percent", "SELECT 100% FROM t LIMIT 0", true},
		{"Unknown", "INSERT INTO 0 (id) VALUES (?)", true},
		{"Missing", "SELECT a, 0 FROM t", true},
		{"Branches", "SELECT * FROM 0", true},
		{"Long", "SELECT a, b, c, d FROM t WHERE a = ?", true},
		{"Wide", "0", false},
	} {
		got, known := r.text(arg(c.fn))
		if got != c.want || known != c.known {
			t.Errorf("%s: text = %.80q, %v; want %q, %v", c.fn, got, known, c.want, c.known)
		}
		if r.budget < -textBudget { // a value past the budget costs its caller one step
			t.Errorf("%s: visited %d values, over twice the budget of %d", c.fn, textBudget-r.budget, textBudget)
		}
	}
}
