package once002

import (
	"go/ast"
	"go/types"
	"slices"
	"strings"
)

// KeyParamFact marks a function that passes some of its parameters on as (part of) an
// idempotency key, itself or through the functions it calls: an argument a caller gives
// there is a key, and is checked as one.
type KeyParamFact struct {
	// Params are the parameters' indexes (the receiver not counted); Names their names.
	Params []int
	Names  []string
}

// AFact marks KeyParamFact as a fact.
func (*KeyParamFact) AFact() {}

func (f *KeyParamFact) String() string { return "keyParam(" + strings.Join(f.Names, ", ") + ")" }

// findKeyParams computes which parameters each function of the package passes on as a key,
// iterating so that a helper calling a helper is found in any order.
func (c *checker) findKeyParams(fields, setters, headers map[string]bool) {
	for changed := true; changed; {
		changed = false
		for obj, fd := range c.funcs {
			found := map[int]bool{}
			for _, sk := range c.sinks(fd.Body, fields, setters, headers) {
				c.paramsOf(obj.Signature(), fd.Body, sk.expr, map[*types.Var]bool{}, found)
			}
			var params []int
			for i := range found {
				params = append(params, i)
			}
			slices.Sort(params)
			if !slices.Equal(params, c.keyParams[obj]) {
				c.keyParams[obj] = params
				changed = true
			}
		}
	}
}

// keyParamsOf returns the key parameters of a function of this package or, through its
// fact, of another.
func (c *checker) keyParamsOf(fn *types.Func) []int {
	fn = fn.Origin()
	if fn.Pkg() == nil {
		return nil
	}
	if fn.Pkg() == c.pass.Pkg {
		return c.keyParams[fn]
	}
	var fact KeyParamFact
	if c.pass.ImportObjectFact(fn, &fact) {
		return fact.Params
	}
	return nil
}

// paramsOf adds to found the parameters of sig whose values e is made from, following
// local variables through their assignments in body. A parameter counts only whole and of
// a type a key is made of (text, a number, bytes, an id, a time): a field of a struct
// parameter, or a context, says nothing of what the caller passes.
func (c *checker) paramsOf(sig *types.Signature, body *ast.BlockStmt, e ast.Expr, seen map[*types.Var]bool, found map[int]bool) {
	info := c.pass.TypesInfo
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SelectorExpr:
			if sel, ok := info.Selections[n]; ok && sel.Kind() == types.FieldVal {
				return false
			}
		case *ast.Ident:
			v, ok := info.Uses[n].(*types.Var)
			if !ok || seen[v] {
				return true
			}
			seen[v] = true
			params := sig.Params()
			for i := range params.Len() {
				if params.At(i) == v && keyLike(v.Type()) && !(sig.Variadic() && i == params.Len()-1) {
					found[i] = true
				}
			}
			if v.Pos() > body.Lbrace && v.Pos() < body.Rbrace {
				for _, rhs := range assignments(info, body, v) {
					c.paramsOf(sig, body, rhs, seen, found)
				}
			}
		}
		return true
	})
}

// assignments returns the values body assigns to the local variable v.
func assignments(info *types.Info, body *ast.BlockStmt, v *types.Var) []ast.Expr {
	var out []ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				id, ok := ast.Unparen(lhs).(*ast.Ident)
				if !ok || info.ObjectOf(id) != v {
					continue
				}
				if len(n.Rhs) == len(n.Lhs) {
					out = append(out, n.Rhs[i])
				} else if len(n.Rhs) == 1 {
					out = append(out, n.Rhs[0])
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if info.Defs[name] == v && i < len(n.Values) {
					out = append(out, n.Values[i])
				}
			}
		}
		return true
	})
	return out
}
