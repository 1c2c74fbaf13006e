package generator

import (
	"fmt"
	"go/token"
	"go/types"

	"github.com/oncekit/once/internal/directive"
)

// param is one parameter of the wrapped function, after its context.
type param struct {
	name     string // as in F, or a made-up name where F has none
	typ      types.Type
	variadic bool
	supplied bool // the pgx.Tx the guard supplies: not a parameter of the wrapper
}

// plan is everything needed to emit one guard's wrapper.
type plan struct {
	g       *Guard
	fn      *types.Func
	recv    *types.Var // nil for a function
	recvPtr bool
	recvID  string // receiver name in the wrapper
	ctxName string
	params  []param
	result  types.Type // nil when F returns only error
	keys    []directive.TypedExpr
	scope   *directive.TypedExpr
	fprint  []directive.TypedExpr
	capX    *directive.TypedExpr
	nX      *directive.TypedExpr
	sealX   *directive.TypedExpr // forever's seal=, in the package's scope
	// keyParams are the parameters the key expressions use, in parameter order (Rearm takes
	// these).
	keyParams []param
}

// checker validates the directives of one package against its types.
type checker struct {
	fset *token.FileSet
	pkg  *types.Package
	info *types.Info
	errs []*directive.Error
}

// plan resolves g against the package's types (with directive.CheckTypes, the check
// oncelint makes too); it returns nil after recording errors.
func (c *checker) plan(g *Guard) *plan {
	t, errs := directive.CheckTypes(c.fset, c.pkg, c.info, g.Directive)
	if len(errs) > 0 {
		c.errs = append(c.errs, errs...)
		return nil
	}
	p := &plan{g: g, fn: t.Obj, result: t.Result, keys: t.Key, scope: t.Scope, fprint: t.Fingerprint, capX: t.Cap, nX: t.N, sealX: t.Seal}
	sig := t.Sig
	taken := map[string]bool{}
	if r := sig.Recv(); r != nil {
		p.recv = r
		_, p.recvPtr = r.Type().(*types.Pointer)
		taken[r.Name()] = true
	}
	ps := sig.Params()
	for i := range ps.Len() {
		taken[ps.At(i).Name()] = true
	}
	for i := 1; i < ps.Len(); i++ {
		v := ps.At(i)
		pr := param{name: v.Name(), typ: v.Type(), variadic: sig.Variadic() && i == ps.Len()-1, supplied: i == t.Tx}
		if pr.name == "" || pr.name == "_" {
			pr.name = fresh(fmt.Sprintf("p%d", i), taken)
		}
		p.params = append(p.params, pr)
	}
	p.ctxName = ps.At(0).Name()
	if p.ctxName == "" || p.ctxName == "_" {
		p.ctxName = fresh("ctx", taken)
	}
	if p.recv != nil {
		p.recvID = p.recv.Name()
		if p.recvID == "" || p.recvID == "_" {
			p.recvID = fresh("recv", taken)
		}
	}
	used := map[*types.Var]bool{}
	for _, k := range p.keys {
		for _, obj := range k.Info.Uses {
			if v, ok := obj.(*types.Var); ok {
				used[v] = true
			}
		}
	}
	for i := 1; i < ps.Len(); i++ {
		if used[ps.At(i)] {
			p.keyParams = append(p.keyParams, p.params[i-1])
		}
	}
	return p
}

// typed is the type-checked expression of an integer argument (statement's cap= or n=), or
// nil for a literal.
func (p *plan) typed(v directive.IntOrExpr) *directive.TypedExpr {
	for _, x := range []*directive.TypedExpr{p.capX, p.nX} {
		if !v.IsLit && x != nil && x.Pos == v.Expr.Pos {
			return x
		}
	}
	return nil
}

// fresh returns base, or base with a number, whichever no name in taken uses; and takes it.
func fresh(base string, taken map[string]bool) string {
	name := base
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	taken[name] = true
	return name
}
