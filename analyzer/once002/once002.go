package once002

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/catalog"
	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/passdoc"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE002"

// UnstableFact marks a function whose result differs on every call.
type UnstableFact struct {
	// Source names the clock or random function the result comes from.
	Source string
}

// AFact marks UnstableFact as a fact.
func (*UnstableFact) AFact() {}

func (f *UnstableFact) String() string { return "unstable(" + f.Source + ")" }

// PackageFact marks a package that exports UnstableFact or KeyParamFact facts, so an
// importer knows to look for them.
type PackageFact struct{}

// AFact marks PackageFact as a fact.
func (*PackageFact) AFact() {}

func (*PackageFact) String() string { return "once002" }

// Analyzer reports unstable idempotency keys, with the built-in catalogue.
var Analyzer = For(effects.Analyzer)

// New returns the analyzer using the catalogue of facts (an effects analyzer). Its result
// is a *Tracer.
func New(facts *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:       "once002",
		Doc:        passdoc.Extract(doc, "once002"),
		URL:        "https://pkg.go.dev/github.com/oncekit/once/analyzer/once002",
		Requires:   []*analysis.Analyzer{facts},
		FactTypes:  []analysis.Fact{new(UnstableFact), new(KeyParamFact), new(PackageFact)},
		ResultType: reflect.TypeFor[*Tracer](),
		Run:        func(pass *analysis.Pass) (any, error) { return run(pass, facts) },
	}
}

var byFacts sync.Map // effects analyzer → its once002

// For returns the one analyzer New makes for facts, so that the checks reading its result
// (ONCE001 asks where a message's content comes from) and the list of checks share one
// run of it.
func For(facts *analysis.Analyzer) *analysis.Analyzer {
	if a, ok := byFacts.Load(facts); ok {
		return a.(*analysis.Analyzer)
	}
	a, _ := byFacts.LoadOrStore(facts, New(facts))
	return a.(*analysis.Analyzer)
}

// Tracer tells the other checks where a value comes from: the clock or random source it
// is derived from, followed as ONCE002 follows a key, through the package's functions and
// the facts of the packages it imports.
type Tracer struct{ c *checker }

// Source returns the source e, an expression of body, is derived from ("time.Now",
// "uuid.New", "GenerateCode, which returns rand.Read"), or "" for a stable value. A
// parameter is stable: where it comes from is its callers' business.
func (t *Tracer) Source(body *ast.BlockStmt, e ast.Expr) string {
	if t == nil || t.c == nil {
		return ""
	}
	src, _ := t.c.trace(body, e)
	return src
}

// Clock reports whether a source Source returned is a clock, not a random value.
func Clock(src string) bool { return strings.Contains(src, "time.") }

type checker struct {
	pass      *analysis.Pass
	cat       *catalog.Catalog
	funcs     map[*types.Func]*ast.FuncDecl
	unstable  map[*types.Func]string // in-package functions returning unstable values
	keyParams map[*types.Func][]int  // in-package functions passing parameters on as keys
	visiting  map[types.Object]bool
}

// sink is an expression handed over as an idempotency key.
type sink struct {
	expr ast.Expr
	// via names the function whose key parameter the expression is passed to, or "".
	via string
}

func run(pass *analysis.Pass, facts *analysis.Analyzer) (any, error) {
	res := pass.ResultOf[facts].(*effects.Result)
	rep := ignore.NewReporter(pass, res.Ignores, Code)
	defer rep.Finish()
	c := &checker{pass: pass, cat: res.Catalog, funcs: map[*types.Func]*ast.FuncDecl{},
		unstable: map[*types.Func]string{}, keyParams: map[*types.Func][]int{}, visiting: map[types.Object]bool{}}
	relevant := c.relevant()
	// A package with no unstable source reports nothing, but one with effects may still
	// pass a parameter on as a key, which its importers need to know.
	if !relevant && res.Fast {
		return &Tracer{c}, nil
	}
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				if obj, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					c.funcs[obj] = fd
				}
			}
		}
	}
	if relevant {
		c.findUnstableFuncs()
	}
	fields, setters, headers := c.cat.KeyFields()
	c.findKeyParams(fields, setters, headers)
	c.exportFacts()
	if !relevant {
		return &Tracer{c}, nil
	}
	for _, f := range pass.Files {
		// A test's key is not a retry's: a test against a sandbox makes a fresh one per
		// run on purpose. Test files are never reported, as by the other checks.
		if strings.HasSuffix(pass.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			for _, sk := range c.sinks(fd.Body, fields, setters, headers) {
				if src, pos := c.trace(fd.Body, sk.expr); src != "" {
					rep.Report(diagnostic(sk, src, pos))
				}
			}
		}
	}
	return &Tracer{c}, nil
}

// relevant is the fast path: a package that imports no clock or random source and no
// package whose functions return one cannot build an unstable key.
func (c *checker) relevant() bool {
	for _, imp := range c.pass.Pkg.Imports() {
		if c.cat.HasUnstable(imp.Path()) || c.pass.ImportPackageFact(imp, new(PackageFact)) {
			return true
		}
	}
	return false
}

func diagnostic(sk sink, src string, pos token.Pos) analysis.Diagnostic {
	what := "comes from " + src + ": a retry makes a new key"
	if Clock(src) {
		what = "is derived from " + src + ": a retry makes a different key"
	}
	key := "idempotency key"
	if sk.via != "" {
		key += " passed to " + sk.via
	}
	d := analysis.Diagnostic{
		Pos: sk.expr.Pos(), End: sk.expr.End(),
		Message: fmt.Sprintf("%s %s, so the provider does the work again; derive it from a stable id (the row's ID) or a timestamp the row holds, or persist the key on the row before the call", key, what),
	}
	if pos.IsValid() && (pos < sk.expr.Pos() || pos >= sk.expr.End()) {
		d.Related = []analysis.RelatedInformation{{Pos: pos, Message: "the key is made here"}}
	}
	return d
}

// findUnstableFuncs computes which functions of the package return an unstable value and
// exports the fact, iterating so that helpers calling helpers are found in any order.
func (c *checker) findUnstableFuncs() {
	for changed := true; changed; {
		changed = false
		for obj, fd := range c.funcs {
			if _, done := c.unstable[obj]; done || !keyLikeResult(obj) {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false
				}
				ret, ok := n.(*ast.ReturnStmt)
				if !ok || len(ret.Results) == 0 {
					return true
				}
				if src, _ := c.trace(fd.Body, ret.Results[0]); src != "" {
					c.unstable[obj] = effects.FuncName(obj) + ", which returns " + src
					changed = true
					return false
				}
				return true
			})
		}
	}
}

// exportFacts exports the unstable results and key parameters of the package's functions
// (those of test files aside), and marks the package when there are any.
func (c *checker) exportFacts() {
	any := false
	for obj, src := range c.unstable {
		if !c.inTest(obj) {
			c.pass.ExportObjectFact(obj, &UnstableFact{Source: src})
			any = true
		}
	}
	// Only other packages need the key parameters, and they can call only exported names.
	for obj, params := range c.keyParams {
		if len(params) > 0 && obj.Exported() && c.pass.Pkg.Name() != "main" && !c.inTest(obj) {
			f := &KeyParamFact{Params: params}
			for _, i := range params {
				f.Names = append(f.Names, obj.Signature().Params().At(i).Name())
			}
			c.pass.ExportObjectFact(obj, f)
			any = true
		}
	}
	if any {
		c.pass.ExportPackageFact(new(PackageFact))
	}
}

func (c *checker) inTest(obj types.Object) bool {
	return strings.HasSuffix(c.pass.Fset.File(obj.Pos()).Name(), "_test.go")
}

// keyLikeResult reports a function whose first result could become a key.
func keyLikeResult(fn *types.Func) bool {
	res := fn.Signature().Results()
	return res.Len() > 0 && keyLike(res.At(0).Type())
}

// keyLike reports a type whose values could become a key: text, bytes, an integer, a
// 16-byte id, or a time.
func keyLike(t types.Type) bool {
	if types.TypeString(t, nil) == "time.Time" {
		return true
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&(types.IsString|types.IsInteger) != 0
	case *types.Slice:
		b, ok := u.Elem().Underlying().(*types.Basic)
		return ok && b.Kind() == types.Byte
	case *types.Array:
		b, ok := u.Elem().Underlying().(*types.Basic)
		return ok && b.Kind() == types.Byte
	}
	return false
}

// sinks returns the expressions in body handed over as idempotency keys: to a provider's
// key field, setter or header, to the runtime, or to a parameter of a function that
// passes it on as one.
func (c *checker) sinks(body *ast.BlockStmt, fields, setters, headers map[string]bool) []sink {
	info := c.pass.TypesInfo
	var out []sink
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok && fields[id.Name] && c.fromProvider(info.Uses[id]) {
				out = append(out, sink{expr: n.Value})
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, lhs := range n.Lhs {
					if sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr); ok && fields[sel.Sel.Name] && info.Selections[sel] != nil && c.fromProvider(info.Selections[sel].Obj()) {
						out = append(out, sink{expr: n.Rhs[i]})
					}
				}
			}
		case *ast.CallExpr:
			fn, _ := typeutil.Callee(info, n).(*types.Func)
			sel, isSel := ast.Unparen(n.Fun).(*ast.SelectorExpr)
			name := ""
			if isSel {
				name = sel.Sel.Name
			} else if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
				name = id.Name
			}
			switch {
			case setters[name] && len(n.Args) == 1 && fn != nil && c.fromProvider(fn):
				out = append(out, sink{expr: n.Args[0]})
			case (name == "WithHeader" || name == "WithHeaderAdd" || name == "Set" || name == "Add") && len(n.Args) == 2 && headerName(info, n.Args[0], headers):
				out = append(out, sink{expr: n.Args[1]})
			case fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == effects.RuntimePath:
				for _, e := range runtimeKeys(fn, n) {
					out = append(out, sink{expr: e})
				}
			case fn != nil:
				for _, i := range c.keyParamsOf(fn) {
					if i < len(n.Args) {
						out = append(out, sink{expr: n.Args[i], via: effects.FuncName(fn.Origin())})
					}
				}
			}
		}
		return true
	})
	return out
}

// fromProvider reports whether a key field or setter belongs to a provider's SDK. The
// application's own IdempotencyKey field (an outbox row's, set once when the job is
// stored and read back by every attempt) is where a key is kept, not where it is handed
// over: it is checked where it reaches the provider.
func (c *checker) fromProvider(obj types.Object) bool {
	return obj != nil && obj.Pkg() != nil && c.cat.FromProvider(obj.Pkg().Path())
}

// headerName reports whether e is a constant naming a key header.
func headerName(info *types.Info, e ast.Expr, headers map[string]bool) bool {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil {
		return false
	}
	s := strings.Trim(tv.Value.ExactString(), `"`)
	return headers[strings.ToLower(s)]
}

// runtimeKeys returns the arguments of a runtime call that become keys: parameters named
// key, and the parts of Key and ProviderKey.
func runtimeKeys(fn *types.Func, call *ast.CallExpr) []ast.Expr {
	sig := fn.Signature()
	var out []ast.Expr
	for i, arg := range call.Args {
		pi := min(i, sig.Params().Len()-1)
		if pi < 0 {
			break
		}
		switch sig.Params().At(pi).Name() {
		case "key", "keys", "parts", "part":
			out = append(out, arg)
		}
	}
	return out
}
