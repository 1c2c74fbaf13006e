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
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

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
	// Schemas names files or directories holding unique constraints, besides those found
	// under the module root; relative names resolve from the module root.
	Schemas []string
}

// Analyzer reports check-then-insert races, reading the schema found under the module
// root.
var Analyzer = New(Config{})

// New returns the check configured by cfg. Its -schema flag names more schema files.
func New(cfg Config) *analysis.Analyzer {
	sf := &listFlag{names: append([]string(nil), cfg.Schemas...)}
	a := &analysis.Analyzer{
		Name:     "once005",
		Doc:      passdoc.Extract(doc, "once005"),
		URL:      "https://pkg.go.dev/github.com/oncekit/once/analyzer/once005",
		Requires: []*analysis.Analyzer{factsAnalyzer},
		Run:      func(pass *analysis.Pass) (any, error) { return check(pass, sf.get()) },
	}
	a.Flags.Var(sf, "schema", "schema `file`s or directories holding unique constraints (comma-separated or repeated), relative to the module root")
	return a
}

// factsAnalyzer reads the SQL each function of a package sends and exports it as facts
// for the packages importing it. The check judges what it read.
var factsAnalyzer = &analysis.Analyzer{
	Name:       "once005facts",
	Doc:        "read the SQL each function sends, for ONCE005",
	Run:        readPackage,
	ResultType: reflect.TypeFor[*reader](),
	FactTypes:  []analysis.Fact{new(FuncFact), new(PackageFact), new(PredicateFact)},
}

// SchemaFlag returns the -schema flag of an analyzer New made, so a command can offer
// it at its top level, or nil for another analyzer.
func SchemaFlag(a *analysis.Analyzer) flag.Value {
	if f := a.Flags.Lookup("schema"); f != nil && a.Name == "once005" {
		return f.Value
	}
	return nil
}

// dbPaths are the import paths whose packages send SQL, or build it.
var dbPaths = []string{"database/sql", "github.com/jmoiron/sqlx", "github.com/jackc/pgx", "gorm.io/gorm", "xorm.io/xorm",
	"github.com/go-xorm/xorm", "github.com/xorm-io/xorm", "github.com/uptrace/bun", "github.com/oncekit/once/runtime", "entgo.io/ent"}

func readPackage(pass *analysis.Pass) (any, error) {
	r := &reader{pass: pass, funcs: map[*ssa.Function]*fnInfo{}, directives: map[*ast.FuncDecl]*directive.Directive{}}
	r.collect()
	if r.relevant() {
		r.exportPredicates()
		if r.anySQL() {
			r.build()
		}
	}
	if r.relevant() || len(r.own.Tables) > 0 || len(r.own.Uniques) > 0 {
		pass.ExportPackageFact(&r.own) // its importers may send SQL through it
	}
	return r, nil
}

// check reports the package's check-then-insert races.
func check(pass *analysis.Pass, schemas []string) (any, error) {
	r := pass.ResultOf[factsAnalyzer].(*reader)
	r.rep = ignore.NewReporter(pass, ignore.Parse(pass.Fset, pass.Files), Code)
	defer r.rep.Finish()
	r.schemas, r.check, r.reported = schemas, pass, map[token.Pos]bool{}
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

// relevant reports whether the package may send SQL: it imports a database library, or a
// package whose facts say it sends some.
func (r *reader) relevant() bool {
	for _, imp := range r.pass.Pkg.Imports() {
		var f PackageFact
		if r.pass.ImportPackageFact(imp, &f) {
			return true
		}
		for _, p := range dbPaths {
			if imp.Path() == p || strings.HasPrefix(imp.Path(), p+"/") {
				return true
			}
		}
	}
	return false
}

// collect reads what the package declares: its directives (a table= directive puts a
// unique index on its columns, which counts in the declaring package only, as oncegen's
// migrations are not read: another package of the module, a naive twin importing the
// app's types, may write a table of its own by that name), the tables its models' TableName methods name, and the
// unique constraints in the DDL of its string constants (executed at start-up).
func (r *reader) collect() {
	r.own.Tables = map[string]string{}
	for _, f := range r.pass.Files {
		test := strings.HasSuffix(r.pass.Fset.File(f.Pos()).Name(), "_test.go")
		ds, _ := directive.ParseFile(r.pass.Fset, f)
		for _, d := range ds {
			r.directives[d.Func] = d
			if d.HasTable() && !test {
				r.declared = append(r.declared, sqlfacts.Unique{Table: d.Table, Columns: d.Columns, Where: "//once:" + string(d.Kind) + " on " + d.FuncName()})
			}
		}
		if test {
			continue
		}
		generated := ast.IsGenerated(f) // oncegen's DDL belongs to the directives
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Name.Name == "TableName" && n.Recv != nil && n.Body != nil && len(n.Body.List) == 1 {
					if ret, ok := n.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
						if s, ok := r.constString(ret.Results[0]); ok {
							if t := named(r.pass.TypesInfo.TypeOf(n.Recv.List[0].Type)); t != nil {
								r.own.Tables[t.Obj().Name()] = strings.ToLower(s)
							}
						}
					}
				}
			case ast.Expr:
				if s, ok := r.constString(n); ok {
					if low := strings.ToLower(s); !generated && strings.Contains(low, "unique") || strings.Contains(low, "primary key") {
						pos := r.pass.Fset.Position(n.Pos())
						r.own.Uniques = append(r.own.Uniques, sqlfacts.ParseDDL(filepath.Base(pos.Filename), s)...)
					}
					return false
				}
			}
			return true
		})
	}
}

func (r *reader) constString(e ast.Expr) (string, bool) {
	tv, ok := r.pass.TypesInfo.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// exportPredicates marks the predicates of an ent generated package with the columns
// they compare: the constant names given to ent's dialect/sql functions in their
// bodies (sql.FieldEQ(FieldEmail, v)).
func (r *reader) exportPredicates() {
	for _, f := range r.pass.Files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Recv != nil {
				continue
			}
			var cols []string
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if fn := typeFunc(r.pass.TypesInfo, call); fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "entgo.io/ent/dialect/sql" {
						for _, a := range call.Args {
							if s, ok := r.constString(a); ok {
								cols = union(cols, []string{strings.ToLower(s)})
							}
						}
					}
				}
				return true
			})
			if obj, ok := r.pass.TypesInfo.Defs[fd.Name].(*types.Func); ok && len(cols) > 0 {
				r.pass.ExportObjectFact(obj, &PredicateFact{Columns: cols})
			}
		}
	}
}

func typeFunc(info *types.Info, call *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	}
	if id == nil {
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	return fn
}

// anySQL reports whether a call of the package sends SQL, or calls a function of
// another package that does: only then is SSA built.
func (r *reader) anySQL() bool {
	found := false
	for _, f := range r.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && !found {
				fn := typeFunc(r.pass.TypesInfo, call)
				if fn == nil || fn.Pkg() == nil {
					return true
				}
				var ff FuncFact
				if fn.Pkg() != r.pass.Pkg && r.pass.ImportObjectFact(fn, &ff) {
					found = true
				}
				if key, t := typeKey(fn); t != nil && (textTypes[key] || types.IsInterface(t) && r.implementedBy(t) != "" || xormPaths[t.Obj().Pkg().Path()] ||
					key == "gorm.io/gorm.DB" || t.Obj().Pkg().Path() == "github.com/uptrace/bun" || r.entGenerated(t.Obj().Pkg())) {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// report reports d, with the check's code.
func (r *reader) report(d analysis.Diagnostic) { r.rep.Report(d) }

// uniques returns the unique constraints the package sees: the schema files', its own
// and its dependencies' (declarations, DDL in constants, model tags).
func (r *reader) uniques() []sqlfacts.Unique {
	if r.schema == nil && r.schemaErr == nil {
		r.schema = &sqlfacts.Schema{}
		if len(r.pass.Files) > 0 {
			dir := filepath.Dir(r.pass.Fset.File(r.pass.Files[0].Pos()).Name())
			s, err := sqlfacts.ForDir(dir, r.schemas)
			if err != nil {
				r.schemaErr = fmt.Errorf("once005: %w", err)
			} else {
				r.schema = s
			}
		}
		r.all = append(append(append([]sqlfacts.Unique(nil), r.schema.Uniques...), r.own.Uniques...), r.declared...)
		for _, pf := range r.pass.AllPackageFacts() {
			if f, ok := pf.Fact.(*PackageFact); ok {
				r.all = append(r.all, f.Uniques...)
			}
		}
	}
	return r.all
}

// listFlag is a repeatable, comma-separated list of names.
type listFlag struct {
	mu    sync.Mutex
	names []string
}

func (f *listFlag) String() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.names, ",")
}

func (f *listFlag) Set(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			f.names = append(f.names, name)
		}
	}
	return nil
}

func (f *listFlag) get() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.names...)
}
