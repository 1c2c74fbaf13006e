package once002

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

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

// Analyzer reports unstable idempotency keys, with the built-in catalogue.
var Analyzer = New(effects.Analyzer)

// New returns the analyzer using the catalogue of facts (an effects analyzer).
func New(facts *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:      "once002",
		Doc:       passdoc.Extract(doc, "once002"),
		URL:       "https://pkg.go.dev/github.com/oncekit/once/analyzer/once002",
		Requires:  []*analysis.Analyzer{facts},
		FactTypes: []analysis.Fact{new(UnstableFact)},
		Run:       func(pass *analysis.Pass) (any, error) { return run(pass, facts) },
	}
}

type checker struct {
	pass     *analysis.Pass
	cat      *catalog.Catalog
	funcs    map[*types.Func]*ast.FuncDecl
	unstable map[*types.Func]string // in-package functions returning unstable values
	visiting map[types.Object]bool
}

func run(pass *analysis.Pass, facts *analysis.Analyzer) (any, error) {
	res := pass.ResultOf[facts].(*effects.Result)
	rep := ignore.NewReporter(pass, res.Ignores, Code)
	defer rep.Finish()
	c := &checker{pass: pass, cat: res.Catalog, funcs: map[*types.Func]*ast.FuncDecl{},
		unstable: map[*types.Func]string{}, visiting: map[types.Object]bool{}}
	if !c.relevant() {
		return nil, nil
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
	c.findUnstableFuncs()
	fields, setters, headers := c.cat.KeyFields()
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			for _, sink := range c.sinks(fd.Body, fields, setters, headers) {
				if src, pos := c.trace(fd.Body, sink); src != "" {
					rep.Report(diagnostic(sink, src, pos))
				}
			}
		}
	}
	return nil, nil
}

// relevant is the fast path: a package that imports no clock or random source and no
// package whose functions return one cannot build an unstable key.
func (c *checker) relevant() bool {
	for _, imp := range c.pass.Pkg.Imports() {
		if c.cat.HasUnstable(imp.Path()) || c.pass.ImportPackageFact(imp, new(UnstableFact)) {
			return true
		}
	}
	return false
}

func diagnostic(sink ast.Expr, src string, pos token.Pos) analysis.Diagnostic {
	what := "comes from " + src + ": a retry makes a new key"
	if strings.Contains(src, "time.") {
		what = "is derived from " + src + ": a retry makes a different key"
	}
	d := analysis.Diagnostic{
		Pos: sink.Pos(), End: sink.End(),
		Message: fmt.Sprintf("idempotency key %s, so the provider does the work again; derive it from a stable id (the row's ID) or a timestamp the row holds, or persist the key on the row before the call", what),
	}
	if pos.IsValid() && (pos < sink.Pos() || pos >= sink.End()) {
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
	for obj, src := range c.unstable {
		if !strings.HasSuffix(c.pass.Fset.File(obj.Pos()).Name(), "_test.go") {
			c.pass.ExportObjectFact(obj, &UnstableFact{Source: src})
		}
	}
	if len(c.unstable) > 0 {
		c.pass.ExportPackageFact(&UnstableFact{Source: "package"})
	}
}

// keyLikeResult reports a function whose first result could become a key: text, bytes,
// a 16-byte id, or a time.
func keyLikeResult(fn *types.Func) bool {
	res := fn.Signature().Results()
	if res.Len() == 0 {
		return false
	}
	t := res.At(0).Type()
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

// sinks returns the expressions in body handed over as idempotency keys.
func (c *checker) sinks(body *ast.BlockStmt, fields, setters, headers map[string]bool) []ast.Expr {
	info := c.pass.TypesInfo
	var out []ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok && fields[id.Name] {
				out = append(out, n.Value)
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, lhs := range n.Lhs {
					if sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr); ok && fields[sel.Sel.Name] {
						out = append(out, n.Rhs[i])
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
			case setters[name] && len(n.Args) == 1:
				out = append(out, n.Args[0])
			case (name == "WithHeader" || name == "WithHeaderAdd" || name == "Set" || name == "Add") && len(n.Args) == 2 && headerName(info, n.Args[0], headers):
				out = append(out, n.Args[1])
			case fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == effects.RuntimePath:
				out = append(out, runtimeKeys(fn, n)...)
			}
		}
		return true
	})
	return out
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
