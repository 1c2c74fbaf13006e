package analyzer_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/analyzer"
)

// cases are the checks' testdata packages the metamorphic test renames, each a GOPATH
// package of the check's testdata/src.
var cases = map[string][]string{
	"once001": {"sms", "alerts", "alerts/providers", "checkout", "retries", "jobs", "declared"},
	"once002": {"keys"},
	"once003": {"sets", "dedupe"},
	"once006": {"lengths"},
}

// No decision of the analyzer rests on the words of the names the user chose: renaming
// every identifier the cases declare (functions, methods, types, fields, variables,
// parameters and the packages themselves), consistently, gives the same findings at the
// same lines. Only names an imported package's interface requires stay (River's Work,
// the stubs' Kind), as the compiler requires.
func TestFindings_DoNotDependOnTheNamesUsersChose(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads and analyses every case twice")
	}
	original := t.TempDir()
	for check := range cases {
		copyDir(t, filepath.Join(check, "testdata", "src"), filepath.Join(original, "src"))
	}
	copyDir(t, filepath.Join("testdata", "src"), filepath.Join(original, "src"))
	var all []string
	for _, pkgs := range cases {
		all = append(all, pkgs...)
	}
	sort.Strings(all)

	before := findings(t, original, all)
	if len(before) < 15 {
		t.Fatalf("only %d findings on the cases: the test would prove little", len(before))
	}
	renamed, newPaths := rename(t, original, all)
	after := findings(t, renamed, newPaths)
	// Files are compared by their renamed directory; lines do not move.
	for i, f := range before {
		before[i] = renamePath(f, all, newPaths)
	}
	sort.Strings(before)
	if !slices.Equal(before, after) {
		t.Errorf("findings differ after renaming:\nbefore %q\nafter  %q", before, after)
	}
}

// findings runs every check on the packages of the GOPATH root and returns the findings
// as "dir/file.go:line: CODE".
func findings(t *testing.T, root string, pkgs []string) []string {
	t.Helper()
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: root, Env: append(os.Environ(), "GOPATH="+root, "GO111MODULE=off", "GOWORK=off")}
	loaded, err := packages.Load(cfg, pkgs...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(loaded) > 0 {
		t.Fatal("the cases do not compile")
	}
	graph, err := checker.Analyze(analyzer.New(&analyzer.Config{}), loaded, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, act := range graph.Roots {
		for _, d := range act.Diagnostics {
			p := act.Package.Fset.Position(d.Pos)
			rel, _ := filepath.Rel(filepath.Join(root, "src"), p.Filename)
			if act.Analyzer.Name == "once005" || strings.HasSuffix(rel, "_test.go") {
				continue
			}
			out = append(out, fmt.Sprintf("%s:%d: %s", filepath.ToSlash(rel), p.Line, d.Category))
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func renamePath(finding string, from, to []string) string {
	dir := finding[:strings.LastIndex(finding[:strings.Index(finding, ":")], "/")]
	for i, p := range from {
		if p == dir {
			return to[i] + finding[len(dir):]
		}
	}
	return finding
}

// rename writes a copy of root where every identifier the case packages declare, and the
// packages' own names and paths, are replaced by meaningless ones.
func rename(t *testing.T, root string, pkgs []string) (string, []string) {
	t.Helper()
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: root, Tests: true, Env: append(os.Environ(), "GOPATH="+root, "GO111MODULE=off", "GOWORK=off")}
	loaded, err := packages.Load(cfg, pkgs...)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	copyDir(t, filepath.Join(root, "src"), filepath.Join(out, "src"))
	newPath := map[string]string{}
	var newPaths []string
	for i, p := range pkgs {
		newPath[p] = fmt.Sprintf("p%02d", i)
		newPaths = append(newPaths, newPath[p])
	}
	names := map[string]string{}
	newName := func(old string) string {
		if n, ok := names[old]; ok {
			return n
		}
		n := fmt.Sprintf("x%03d", len(names))
		if ast.IsExported(old) {
			n = strings.ToUpper(n[:1]) + n[1:]
		}
		names[old] = n
		return n
	}
	done := map[string]bool{}
	for _, pkg := range loaded {
		for i, f := range pkg.Syntax {
			file := pkg.CompiledGoFiles[i]
			// Only the cases' own files: a test's generated main lives in the build cache,
			// and a relative path to it would write outside the copy.
			if done[file] || !strings.HasPrefix(file, filepath.Join(root, "src")+string(filepath.Separator)) {
				continue
			}
			done[file] = true
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			type edit struct {
				off, end int
				text     string
			}
			var edits []edit
			tf := pkg.Fset.File(f.Pos())
			ast.Inspect(f, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if !ok || id.Name == "_" || id.Name == "init" || id.Name == "main" {
					return true
				}
				obj := pkg.TypesInfo.Defs[id]
				if obj == nil {
					obj = pkg.TypesInfo.Uses[id]
				}
				// An embedded field is named by its type: it is renamed with the type, or
				// not at all (an SDK's client embedded in the app's own struct).
				if v, isVar := obj.(*types.Var); isVar && v.IsField() && v.Embedded() {
					t := v.Type()
					if p, isPtr := t.(*types.Pointer); isPtr {
						t = p.Elem()
					}
					n, isNamed := types.Unalias(t).(*types.Named)
					if !isNamed {
						return true
					}
					obj = n.Obj()
				}
				if pn, isPkg := obj.(*types.PkgName); isPkg {
					if np := newPath[pn.Imported().Path()]; np != "" {
						edits = append(edits, edit{tf.Offset(id.Pos()), tf.Offset(id.End()), np})
					}
					return true
				}
				if obj == nil || obj.Pkg() == nil || !isCase(obj.Pkg().Path(), pkgs) || required(obj, pkgs) {
					return true
				}
				edits = append(edits, edit{tf.Offset(id.Pos()), tf.Offset(id.End()), newName(id.Name)})
				return true
			})
			edits = append(edits, edit{tf.Offset(f.Name.Pos()), tf.Offset(f.Name.End()), newPath[pkg.PkgPath]})
			for _, imp := range f.Imports {
				if p := strings.Trim(imp.Path.Value, `"`); newPath[p] != "" {
					edits = append(edits, edit{tf.Offset(imp.Path.Pos()), tf.Offset(imp.Path.End()), `"` + newPath[p] + `"`})
				}
			}
			sort.Slice(edits, func(i, j int) bool { return edits[i].off > edits[j].off })
			text := src
			for _, e := range edits {
				text = append(append(append([]byte{}, text[:e.off]...), e.text...), text[e.end:]...)
			}
			// A directive's expressions name parameters and fields: rename their words
			// too (the kind, the argument names and SQL columns are not the user's Go).
			text = exprArgRE.ReplaceAllFunc(text, func(arg []byte) []byte {
				name, value, _ := strings.Cut(string(arg), "=")
				return []byte(name + "=" + wordRE.ReplaceAllStringFunc(value, func(w string) string {
					if n, ok := names[w]; ok {
						return n
					}
					return w
				}))
			})
			rel, _ := filepath.Rel(filepath.Join(root, "src", pkg.PkgPath), file)
			pkgPath := strings.TrimSuffix(pkg.PkgPath, "_test")
			dst := filepath.Join(out, "src", newPath[pkgPath], rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, text, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range pkgs {
		// The old directories would still build: keep only the renamed ones.
		for _, e := range mustReadDir(t, filepath.Join(out, "src", p)) {
			if !e.IsDir() {
				os.Remove(filepath.Join(out, "src", p, e.Name()))
			}
		}
	}
	return out, newPaths
}

var (
	exprArgRE = regexp.MustCompile(`\b(key|scope|fingerprint|cap|n)=[^ \n]+`)
	wordRE    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

func isCase(path string, pkgs []string) bool {
	return slices.Contains(pkgs, strings.TrimSuffix(path, "_test"))
}

// required reports a method that implements an interface of a package other than the
// cases: the compiler holds it to its name.
func required(obj types.Object, pkgs []string) bool {
	fn, ok := obj.(*types.Func)
	if !ok || fn.Signature().Recv() == nil {
		return false
	}
	recv := fn.Signature().Recv().Type()
	for _, imp := range fn.Pkg().Imports() {
		if isCase(imp.Path(), pkgs) {
			continue
		}
		for _, n := range imp.Scope().Names() {
			tn, ok := imp.Scope().Lookup(n).(*types.TypeName)
			if !ok {
				continue
			}
			iface, ok := tn.Type().Underlying().(*types.Interface)
			if !ok || iface.NumMethods() == 0 {
				continue
			}
			if named, ok := tn.Type().(*types.Named); ok && named.TypeParams().Len() > 0 {
				// A generic interface (River's Worker[T]): its method names bind all the same.
				for i := 0; i < iface.NumMethods(); i++ {
					if iface.Method(i).Name() == fn.Name() {
						return true
					}
				}
				continue
			}
			for i := 0; i < iface.NumMethods(); i++ {
				if iface.Method(i).Name() == fn.Name() && (types.Implements(recv, iface) || types.Implements(types.NewPointer(recv), iface)) {
					return true
				}
			}
		}
	}
	return false
}

func mustReadDir(t *testing.T, dir string) []fs.DirEntry {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// The analyzer's source compares no identifier's name with a word: no name of a
// function, type, field or variable the user chose is tested against a string literal or
// a list of them. Names are compared only with data (the catalogue's, a directive's).
// A library's own API names (a builder's methods, a clause type) are compared through the
// catalogue's data or a named constant of that API. One file is left out:
// internal/sqlfacts/naming.go holds the ORMs' own rules for the table or column a Go name
// maps to (snake case and plural, gorm's ID field, ent's builder names), which is what the
// library itself computes from the name, not a guess at what the code does.
func TestSource_MatchesNoWordsAgainstNames(t *testing.T) {
	t.Parallel()
	skip := []string{"testdata", "internal/sqlfacts/naming.go"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, s := range skip {
			if strings.HasPrefix(filepath.ToSlash(path), s) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isName(n.X) && isLiteral(n.Y) || isName(n.Y) && isLiteral(n.X)) {
					t.Errorf("%s: a name is compared with a word", fset.Position(n.Pos()))
				}
			case *ast.SwitchStmt:
				if isName(n.Tag) {
					t.Errorf("%s: a switch on a name", fset.Position(n.Pos()))
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "strings" || pkg != nil && pkg.Name == "slices" {
						for _, a := range n.Args {
							if isName(a) {
								t.Errorf("%s: strings or slices applied to a name", fset.Position(n.Pos()))
							}
						}
					}
				}
			case *ast.IndexExpr:
				if isName(n.Index) {
					if _, isLit := n.X.(*ast.CompositeLit); isLit {
						t.Errorf("%s: a name looked up in a literal table", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isName reports an expression reading an identifier's name: x.Name() or x.Name.
func isName(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Name" && len(e.Args) == 0
	case *ast.SelectorExpr:
		return e.Sel.Name == "Name"
	}
	return false
}

// isLiteral reports a string literal other than the empty name and the blank one, which
// the language, not a user, gives a meaning.
func isLiteral(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Value != `""` && lit.Value != `"_"`
}
