package once005

import (
	_ "embed"
	"flag"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/passdoc"
	"github.com/oncekit/once/analyzer/internal/sqlfacts"
	"github.com/oncekit/once/internal/directive"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE005"

// Config configures the check.
type Config struct {
	// Schemas names more files or directories of unique constraints, from the module root.
	Schemas []string
}

// Analyzer reports check-then-insert races.
var Analyzer = New(Config{})

// New returns the check configured by cfg. Its -schema flag names more schema files.
func New(cfg Config) *analysis.Analyzer {
	schemas := append([]string(nil), cfg.Schemas...)
	a := &analysis.Analyzer{
		Name:     analyzerName,
		Doc:      passdoc.Extract(doc, "once005"),
		URL:      "https://pkg.go.dev/github.com/oncekit/once/analyzer/once005",
		Requires: []*analysis.Analyzer{factsAnalyzer},
		Run:      func(pass *analysis.Pass) (any, error) { return check(pass, schemas) },
	}
	a.Flags.Func("schema", "schema `file`s or directories holding unique constraints (comma-separated or repeated), relative to the module root", func(s string) error {
		for _, name := range strings.Split(s, ",") {
			if name = strings.TrimSpace(name); name != "" {
				schemas = append(schemas, name) // set before any package is analysed
			}
		}
		return nil
	})
	return a
}

// analyzerName is the check's name on the command line and in vet's output.
const analyzerName = "once005"

// SchemaFlag returns the -schema flag of an analyzer New made, or nil.
func SchemaFlag(a *analysis.Analyzer) flag.Value {
	if f := a.Flags.Lookup("schema"); f != nil && a.Name == analyzerName {
		return f.Value
	}
	return nil
}

// factsAnalyzer reads what each function sends, for the check and as facts.
var factsAnalyzer = &analysis.Analyzer{
	Name:       "once005facts",
	Doc:        "read the SQL each function sends, for ONCE005",
	Run:        readPackage,
	ResultType: reflect.TypeFor[*reader](),
	FactTypes:  []analysis.Fact{new(FuncFact), new(PackageFact)},
}

func readPackage(pass *analysis.Pass) (any, error) {
	r := &reader{pass: pass, funcs: map[*ssa.Function]*fnInfo{}, directives: map[*ast.FuncDecl]*directive.Directive{}}
	// It imports a library that sends SQL, or a package that may.
	relevant := slices.ContainsFunc(pass.Pkg.Imports(), func(imp *types.Package) bool {
		return pass.ImportPackageFact(imp, new(PackageFact)) || libraryPaths[imp.Path()]
	})
	if r.collect(relevant) {
		r.build()
	}
	if relevant || len(r.own.Tables) > 0 || len(r.own.Uniques) > 0 {
		pass.ExportPackageFact(&r.own)
	}
	return r, nil
}

// check reports the package's check-then-insert races.
func check(pass *analysis.Pass, schemas []string) (any, error) {
	r := pass.ResultOf[factsAnalyzer].(*reader)
	r.rep = ignore.NewReporter(pass, ignore.Parse(pass.Fset, pass.Files), Code)
	defer r.rep.Finish()
	r.schemas, r.reported = schemas, map[token.Pos]bool{}
	if len(schemas) > 0 {
		r.uniques() // a name that does not exist is an error wherever it is given
	}
	for _, fi := range r.order {
		if fi.judged && !fi.covered && !fi.serial {
			r.judge(fi)
		}
	}
	return nil, r.schemaErr
}

// collect reads the package's directives (a table= index counts here only: a naive twin
// importing the app's types writes its own table), its models' TableName methods, the
// DDL of its constants (run at start-up); and with relevant, whether a call sends SQL,
// itself or by another package's function: only then is SSA built.
func (r *reader) collect(relevant bool) (sends bool) {
	r.own.Tables = map[string]string{}
	for _, f := range r.pass.Files {
		test := strings.HasSuffix(r.pass.Fset.Position(f.Pos()).Filename, "_test.go")
		ds, _ := directive.ParseFile(r.pass.Fset, f)
		for _, d := range ds {
			if r.directives[d.Func] = d; d.HasTable() && !test {
				r.declared = append(r.declared, sqlfacts.Unique{Table: d.Table, Columns: d.Columns})
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if tableMethods[n.Name.Name] && n.Recv != nil && n.Body != nil && len(n.Body.List) == 1 {
					ret, _ := n.Body.List[0].(*ast.ReturnStmt)
					if t := named(r.pass.TypesInfo.TypeOf(n.Recv.List[0].Type)); ret != nil && len(ret.Results) == 1 && t != nil {
						if s, ok := r.constString(ret.Results[0]); ok {
							r.own.Tables[t.Obj().Name()] = strings.ToLower(s)
						}
					}
				}
			case *ast.CallExpr:
				if fn, _ := typeutil.Callee(r.pass.TypesInfo, n).(*types.Func); relevant && fn != nil && !sends {
					sends = fn.Pkg() != r.pass.Pkg && r.pass.ImportObjectFact(fn, new(FuncFact))
					if t := recvType(fn); t != nil {
						lib, _ := r.library(t, "")
						sends = sends || lib != nil || types.IsInterface(t) && r.implementedBy(t) != t
					}
				}
			case ast.Expr:
				if s, ok := r.constString(n); ok {
					if low := strings.ToLower(s); !test && !ast.IsGenerated(f) && (strings.Contains(low, "unique") || strings.Contains(low, "primary key")) {
						r.own.Uniques = append(r.own.Uniques, sqlfacts.ParseDDL(s)...)
					}
					return false
				}
			}
			return true
		})
	}
	return sends
}

func (r *reader) constString(e ast.Expr) (string, bool) {
	if tv, ok := r.pass.TypesInfo.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
		return constant.StringVal(tv.Value), true
	}
	return "", false
}

// uniques returns the unique constraints the package sees, read once.
func (r *reader) uniques() []sqlfacts.Unique {
	if r.all != nil || r.schemaErr != nil {
		return r.all
	}
	r.all = append(append([]sqlfacts.Unique{}, r.own.Uniques...), r.declared...)
	for _, pf := range r.pass.AllPackageFacts() {
		if f, ok := pf.Fact.(*PackageFact); ok {
			r.all = append(r.all, f.Uniques...)
		}
	}
	if len(r.pass.Files) > 0 {
		us, err := sqlfacts.ForDir(filepath.Dir(r.pass.Fset.File(r.pass.Files[0].Pos()).Name()), r.schemas)
		if err != nil {
			r.schemaErr = fmt.Errorf("once005: %w", err)
			return nil
		}
		r.all = append(r.all, us...)
	}
	return r.all
}
