package model

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/catalog"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/internal/directive"
)

// Config configures the analysis. The checks built around one Analyzer share it.
type Config struct {
	// Catalogs are catalogue files beyond the built-in one and the module root's
	// oncelint.json; a relative name resolves from the module root.
	Catalogs []string
	// Strict reports every catalogued effect no promise covers, on a repeat path or not.
	Strict bool
	// Summary makes each package report its coverage as a diagnostic of category
	// CoverageCategory, for the standalone driver to gather.
	Summary bool
}

// New returns the shared analysis configured by what config returns when it runs (so
// flags parsed after New still count).
func New(config func() Config) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name: "oncemodel",
		Doc:  "shared analysis of oncelint's checks: effects, promises, keys and coverage, as facts",
		URL:  "https://pkg.go.dev/github.com/oncekit/once/analyzer",
		Run: func(pass *analysis.Pass) (any, error) {
			cfg := config()
			return run(pass, &cfg)
		},
		RunDespiteErrors: true,
		ResultType:       reflect.TypeFor[*Result](),
		FactTypes:        []analysis.Fact{(*FuncFact)(nil), (*PackageFact)(nil)},
	}
}

// Result is what the checks read.
type Result struct {
	Ignores *ignore.Index
	// Directives are the package's valid //once: directives, DirectiveErrors the
	// parser's errors, Notes the //oncelint: declarations.
	Directives      []*directive.Directive
	DirectiveErrors []*directive.Error
	Notes           []*Note
	// Declared maps the package's declared functions to their directives.
	Declared map[*types.Func]*directive.Directive
	// Findings are ONCE001's, Keys ONCE002's, Sets ONCE003's, Requests ONCE006's.
	Findings []*Finding
	Keys     []*KeyFinding
	Sets     []*SetFinding
	Requests []*RequestFinding
	// Bypasses are direct calls of declared functions (ONCE004).
	Bypasses []*Bypass
	// Sites are the positions of the package's effect calls: an ignore covering one is in
	// use, whichever package reports the finding.
	Sites []token.Pos

	coverage string
}

// Note is a //oncelint:read or //oncelint:repeat declaration.
type Note struct {
	Pos     token.Pos
	Verb    string // "read" or "repeat"
	Func    *types.Func
	Problem string
}

// Finding is an effect reached from code that runs again, with no promise (ONCE001).
type Finding struct {
	Pos    token.Pos
	Effect Effect
	// Repeats are where the repeats come from (each root or loop the pass found);
	// Strict marks a finding of -strict alone.
	Repeats []Repeat
	Strict  bool
	// Unrelated names the promises the effect passes whose key is unrelated to its own.
	Unrelated []string
	ImplPos   []token.Pos
	// MadePos is where the effect is made, when the finding sits at a call giving its
	// content.
	MadePos token.Pos
}

// Bypass is a direct call of a function declared with a //once: directive, which skips
// the generated guard (ONCE004).
type Bypass struct {
	Call    *ast.CallExpr
	Func    *ast.FuncDecl // the function making the call
	Callee  *types.Func
	Kind    string
	Wrapper string
	// Decl is the directive's position when the function is this package's.
	Decl token.Pos
}

// Repeat is a place that runs an effect again, and what it is.
type Repeat struct {
	Pos  token.Pos
	What string
}

// KeyFinding is an idempotency key made from the clock or randomness (ONCE002).
type KeyFinding struct {
	Pos, Source token.Pos
	What        string // where the key goes: "the Idempotency-Key header"
	From        string // what it is made from
	Kind        string
}

// SetFinding is a set lasting the process used as the guard of an effect (ONCE003).
type SetFinding struct {
	Pos    token.Pos
	Set    string
	Effect Effect
}

// RequestFinding is a request-length promise around a paid effect (ONCE006).
type RequestFinding struct {
	Pos    token.Pos
	Guard  string
	Effect Effect
}

func run(pass *analysis.Pass, cfg *Config) (_ any, err error) {
	res := &Result{Declared: map[*types.Func]*directive.Directive{}}
	defer func() {
		// A dependency the analysis cannot follow leaves its importers without its facts,
		// not without their findings; the analysed code's own failure is an error.
		if r := recover(); r != nil && isUser(pass) {
			err = fmt.Errorf("analysing %s: %v", pass.Pkg.Path(), r)
		}
	}()
	res.Ignores = ignore.Parse(pass.Fset, pass.Files)
	dir := ""
	if len(pass.Files) > 0 {
		dir = filepath.Dir(pass.Fset.File(pass.Files[0].Pos()).Name())
	}
	cat, err := catalog.Load(dir, cfg.Catalogs...)
	if err != nil {
		return nil, err
	}
	for _, f := range pass.Files {
		ds, errs := directive.ParseFile(pass.Fset, f)
		res.Directives = append(res.Directives, ds...)
		res.DirectiveErrors = append(res.DirectiveErrors, errs...)
		res.Notes = append(res.Notes, parseNotes(pass, f)...)
	}
	for _, d := range res.Directives {
		if fn, ok := pass.TypesInfo.Defs[d.Func.Name].(*types.Func); ok {
			res.Declared[fn] = d
		}
	}
	a := &analyzer{pass: pass, cfg: cfg, cat: cat, res: res, units: map[*types.Func]*unit{},
		pkgFacts: map[*types.Package]*PackageFact{}, user: isUser(pass), cov: Coverage{Sites: map[string]string{}, Covered: map[string]string{}}}
	if std(pass) || !a.needed() {
		a.coverage(false)
		return res, nil
	}
	a.analyse(BuildSSA(pass))
	a.coverage(true)
	return res, nil
}

// std reports a package of the standard library: its files are in GOROOT.
func std(pass *analysis.Pass) bool {
	return len(pass.Files) == 0 || inGoroot(pass.Fset, pass.Files[0].Pos())
}

// inGoroot reports a position in the standard library's source.
func inGoroot(fset *token.FileSet, pos token.Pos) bool {
	return strings.HasPrefix(fset.Position(pos).Filename, filepath.Join(build.Default.GOROOT, "src")+string(filepath.Separator))
}

// isUser reports whether the package is the analysed code (the main module, a workspace
// module) rather than a dependency: one the build gives a version, or one in a vendor
// directory (vendor/<import path>, whose module a vendored build may not name). Without
// module information, everything outside the standard library is.
func isUser(pass *analysis.Pass) bool {
	if len(pass.Files) > 0 && !strings.Contains("/"+pass.Pkg.Path()+"/", "/vendor/") &&
		strings.Contains(filepath.ToSlash(pass.Fset.Position(pass.Files[0].Pos()).Filename), "/vendor/"+pass.Pkg.Path()+"/") {
		return false
	}
	if pass.Module != nil && pass.Module.Path != "" {
		return pass.Module.Version == "" && pass.Module.Path != "std"
	}
	return !std(pass)
}

// analyzer holds the state of one pass.
type analyzer struct {
	pass     *analysis.Pass
	cfg      *Config
	cat      *catalog.Catalog
	res      *Result
	user     bool
	units    map[*types.Func]*unit
	pkgFacts map[*types.Package]*PackageFact
	called   map[*types.Func]bool
	cov      Coverage // what the package saw, as the driver's summary gathers it
	// rootTypes are the named function types this package's code calls as a framework
	// calls a handler; roots are the functions found run by such code.
	rootTypes map[string]bool
	roots     map[*types.Func]root
	rootEffs  []*eff
	queued    map[string][]*eff // the effects of workers, by the queue they receive from
	closure   []*types.Package
	synthetic map[string]token.Pos
	starts    map[token.Pos]token.Pos
	found     map[string]*Finding
	guards    []*guardCtx
	fieldURLs map[*types.Var]*Send
}

// packageFact returns the package fact of p, or nil.
func (a *analyzer) packageFact(p *types.Package) *PackageFact {
	f, ok := a.pkgFacts[p]
	if !ok {
		f = &PackageFact{}
		if p == a.pass.Pkg || !a.pass.ImportPackageFact(p, f) {
			f = nil
		}
		a.pkgFacts[p] = f
	}
	return f
}

// needed reports whether the package needs the analysis: it holds a declaration or an
// ignore, the catalogue names it, or it uses something the catalogue names, a package with
// facts or (for the standalone driver) a method of one of the module's own interfaces.
func (a *analyzer) needed() bool {
	if len(a.res.Directives) > 0 || len(a.res.Notes) > 0 || len(a.res.Ignores.List) > 0 || a.cat.Names(a.pass.Pkg.Path()) || a.verdictShaped() {
		return true
	}
	impls := slices.ContainsFunc(a.importClosure(), func(p *types.Package) bool { f := a.packageFact(p); return f != nil && len(f.Impls) > 0 })
	for _, obj := range a.pass.TypesInfo.Uses {
		fn, ok := obj.(*types.Func)
		if ok && a.cfg.Summary && a.ownInterface(fn) {
			return true // an open call, perhaps
		}
		if !ok || fn.Pkg() == nil || fn.Pkg() == a.pass.Pkg {
			continue
		}
		if _, ok := setOps[catalog.Normalize(FuncName(fn))]; ok || a.cat.Names(fn.Pkg().Path()) ||
			fn.Pkg().Path() == RuntimePath || a.packageFact(fn.Pkg()) != nil {
			return true
		}
		// The analysed code's helpers that return the clock or randomness carry it to
		// the keys of other packages; an interface's method may reach an implementation's.
		if a.user && a.cat.Unstable(FuncName(fn), fn.Pkg().Path()) != "" || impls && types.IsInterface(recvType(fn)) {
			return true
		}
	}
	return false
}

// verdictShaped reports a function answering one bool that assigns to a map's element
// (an index expression, so a read as well): the shape of a dedupe set's verdict, which
// importers need as a fact.
func (a *analyzer) verdictShaped() bool {
	for _, f := range a.pass.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Type.Results == nil || len(fd.Type.Results.List) != 1 ||
				!types.Identical(a.pass.TypesInfo.TypeOf(fd.Type.Results.List[0].Type), types.Typ[types.Bool]) {
				continue
			}
			writes := false
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok {
					for _, l := range as.Lhs {
						if ix, ok := l.(*ast.IndexExpr); ok && isMap(a.pass.TypesInfo.TypeOf(ix.X)) {
							writes = true
						}
					}
				}
				return !writes
			})
			if writes {
				return true
			}
		}
	}
	return false
}

func isMap(t types.Type) bool {
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Map)
	return ok
}

func recvType(fn *types.Func) types.Type {
	if r := fn.Signature().Recv(); r != nil {
		return r.Type()
	}
	return types.Typ[types.Invalid]
}

// importClosure returns the packages the package's non-test files import, directly or
// not: the code an interface call may reach (a test's doubles are left out).
func (a *analyzer) importClosure() []*types.Package {
	if a.closure != nil {
		return a.closure
	}
	a.closure = []*types.Package{}
	direct := map[string]bool{}
	for _, f := range a.pass.Files {
		if a.isTest(f.Pos()) {
			continue
		}
		for _, imp := range f.Imports {
			direct[strings.Trim(imp.Path.Value, `"`)] = true
		}
	}
	seen := map[*types.Package]bool{}
	var visit func(p *types.Package)
	visit = func(p *types.Package) {
		if seen[p] {
			return
		}
		seen[p] = true
		a.closure = append(a.closure, p)
		for _, q := range p.Imports() {
			visit(q)
		}
	}
	for _, p := range a.pass.Pkg.Imports() {
		if direct[p.Path()] {
			visit(p)
		}
	}
	return a.closure
}

func (a *analyzer) isTest(pos token.Pos) bool {
	return strings.HasSuffix(a.pass.Fset.Position(pos).Filename, "_test.go")
}

// parseNotes reads the //oncelint:read and //oncelint:repeat declarations of a file.
func parseNotes(pass *analysis.Pass, f *ast.File) []*Note {
	var out []*Note
	docs := map[*ast.CommentGroup]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
			docs[fd.Doc] = fd
		}
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			rest, ok := strings.CutPrefix(c.Text, "//oncelint:")
			if !ok || strings.HasPrefix(rest, "ignore") {
				continue
			}
			verb, reason, _ := strings.Cut(rest, " ")
			n := &Note{Pos: c.Slash, Verb: verb}
			switch fd := docs[g]; {
			case verb != "read" && verb != "repeat":
				n.Problem = fmt.Sprintf("unknown declaration //oncelint:%s: the declarations are //oncelint:read, //oncelint:repeat and //oncelint:ignore", verb)
			case strings.TrimSpace(reason) == "":
				n.Problem = fmt.Sprintf("//oncelint:%s gives no reason: say why", verb)
			case fd == nil:
				n.Problem = fmt.Sprintf("//oncelint:%s is not in a function's doc comment: it declares what a function does", verb)
			default:
				n.Func, _ = pass.TypesInfo.Defs[fd.Name].(*types.Func)
			}
			out = append(out, n)
		}
	}
	return out
}

// noted reports whether fn carries a valid declaration of the verb.
func (a *analyzer) noted(fn *types.Func, verb string) bool {
	return slices.ContainsFunc(a.res.Notes, func(n *Note) bool { return n.Func == fn && n.Verb == verb && n.Problem == "" })
}
