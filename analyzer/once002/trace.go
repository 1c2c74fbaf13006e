package once002

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/effects"
)

// trace follows e back to a clock or random source, and returns its name and position,
// or "" if e is stable.
func (c *checker) trace(body *ast.BlockStmt, e ast.Expr) (string, token.Pos) {
	info := c.pass.TypesInfo
	switch x := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		return c.trace(body, x.X)
	case *ast.StarExpr:
		return c.trace(body, x.X)
	case *ast.SliceExpr: // hex.EncodeToString(b[:])
		return c.trace(body, x.X)
	case *ast.IndexExpr:
		return c.trace(body, x.X)
	case *ast.BinaryExpr:
		if src, pos := c.trace(body, x.X); src != "" {
			return src, pos
		}
		return c.trace(body, x.Y)
	case *ast.CompositeLit:
		for _, elt := range x.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				elt = kv.Value
			}
			if src, pos := c.trace(body, elt); src != "" {
				return src, pos
			}
		}
	case *ast.CallExpr:
		return c.traceCall(body, x)
	case *ast.Ident:
		v, ok := info.Uses[x].(*types.Var)
		if !ok || v.Pos() < body.Lbrace || v.Pos() > body.Rbrace {
			return "", token.NoPos // a parameter, a package-level variable or a constant
		}
		return c.traceVar(body, v)
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[x]; ok && sel.Kind() == types.FieldVal {
			return c.traceField(body, x)
		}
		// A package's random source: crypto/rand.Reader.
		if v, ok := info.Uses[x.Sel].(*types.Var); ok && v.Pkg() != nil && c.cat.IsUnstable(v.Pkg().Path()+"."+v.Name(), v.Pkg().Path()) {
			return v.Pkg().Name() + "." + v.Name(), x.Pos()
		}
	}
	return "", token.NoPos
}

// traceCall traces a call: an unstable source, a helper with the fact, a conversion, or a
// function of unstable arguments or receiver.
func (c *checker) traceCall(body *ast.BlockStmt, call *ast.CallExpr) (string, token.Pos) {
	info := c.pass.TypesInfo
	if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
		if len(call.Args) == 1 {
			return c.trace(body, call.Args[0])
		}
		return "", token.NoPos
	}
	if fn, ok := typeutil.Callee(info, call).(*types.Func); ok {
		fn = fn.Origin()
		if fn.Pkg() != nil && c.cat.IsUnstable(fn.FullName(), fn.Pkg().Path()) {
			return effects.FuncName(fn), call.Pos()
		}
		if src, ok := c.unstable[fn]; ok {
			return src, call.Pos()
		}
		var fact UnstableFact
		if fn.Pkg() != nil && fn.Pkg() != c.pass.Pkg && c.pass.ImportObjectFact(fn, &fact) {
			return fact.Source, call.Pos()
		}
		if fn.Pkg() != nil && fn.Pkg().Path() == effects.RuntimePath && fn.Name() == "ProviderKeyFrom" {
			return "", token.NoPos // the provider guard's key, derived from the row
		}
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if s, ok := info.Selections[sel]; ok && s.Kind() == types.MethodVal {
			if src, pos := c.trace(body, sel.X); src != "" {
				return src, pos
			}
		}
	}
	for _, arg := range call.Args {
		if src, pos := c.trace(body, arg); src != "" {
			return src, pos
		}
	}
	return "", token.NoPos
}

// traceVar traces a local variable through every assignment of it in body. A variable
// scanned back from a row (rows.Scan(&v)) holds the row's value and is stable.
func (c *checker) traceVar(body *ast.BlockStmt, v *types.Var) (string, token.Pos) {
	if c.visiting[v] {
		return "", token.NoPos
	}
	c.visiting[v] = true
	defer delete(c.visiting, v)
	info := c.pass.TypesInfo
	var src string
	var pos token.Pos
	scanned := false
	ast.Inspect(body, func(n ast.Node) bool {
		if scanned {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				id, ok := ast.Unparen(lhs).(*ast.Ident)
				if !ok || (info.Defs[id] != v && info.Uses[id] != v) {
					continue
				}
				var rhs ast.Expr
				if len(n.Rhs) == len(n.Lhs) {
					rhs = n.Rhs[i]
				} else if len(n.Rhs) == 1 {
					rhs = n.Rhs[0] // k, err := newKey()
				}
				if rhs != nil && src == "" {
					src, pos = c.trace(body, rhs)
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if info.Defs[name] == v && i < len(n.Values) && src == "" {
					src, pos = c.trace(body, n.Values[i])
				}
			}
		case *ast.CallExpr:
			fn, _ := typeutil.Callee(info, n).(*types.Func)
			for _, arg := range n.Args {
				if !refersTo(info, arg, v) {
					continue
				}
				switch {
				case fn != nil && fn.Name() == "Scan":
					scanned = true
				case fn != nil && fn.Pkg() != nil && src == "" && c.cat.IsUnstable(fn.FullName(), fn.Pkg().Path()):
					src, pos = effects.FuncName(fn), n.Pos() // rand.Read(buf)
				case src == "" && writable(info, arg):
					// A call filling the buffer from a random source: io.ReadFull(rand.Reader,
					// buf), rand.Reader.Read(buf), hex.Encode(dst, random).
					if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && info.Selections[sel] != nil {
						src, pos = c.trace(body, sel.X)
					}
					for _, other := range n.Args {
						if src == "" && other != arg {
							src, pos = c.trace(body, other)
						}
					}
				}
			}
		}
		return true
	})
	if scanned {
		return "", token.NoPos
	}
	return src, pos
}

// refersTo reports whether e is v, &v or a slice of v (v[:]).
func refersTo(info *types.Info, e ast.Expr, v *types.Var) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	if s, ok := e.(*ast.SliceExpr); ok {
		e = ast.Unparen(s.X)
	}
	id, ok := e.(*ast.Ident)
	return ok && info.Uses[id] == v
}

// writable reports whether a call can write through the argument e: it is an address, a
// slice expression, or of slice or pointer type. A string or a number passed by value
// (log.Printf("%s", key, time.Now())) is only read.
func writable(info *types.Info, e ast.Expr) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		return true
	}
	if _, ok := e.(*ast.SliceExpr); ok {
		return true
	}
	if t := info.TypeOf(e); t != nil {
		switch t.Underlying().(type) {
		case *types.Slice, *types.Pointer:
			return true
		}
	}
	return false
}

// dbWrites name the calls that persist a value: database writes and repository saves.
var dbWrites = []string{"Exec", "Query", "Save", "Update", "Insert", "Store", "Persist", "Put", "Upsert", "Create"}

// traceField traces a field read x.F: it is unstable only when body assigns x.F an
// unstable value and does not persist it (pass it, or x, to a database write) before the
// read. A field never assigned here comes from the row or the caller: stable.
func (c *checker) traceField(body *ast.BlockStmt, read *ast.SelectorExpr) (string, token.Pos) {
	info := c.pass.TypesInfo
	field := info.Selections[read].Obj()
	root := rootVar(info, read.X)
	if root == nil || c.visiting[field] {
		return "", token.NoPos
	}
	c.visiting[field] = true
	defer delete(c.visiting, field)
	var src string
	var pos, assigned token.Pos
	persisted := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Pos() > read.Pos() || len(n.Lhs) != len(n.Rhs) {
				return true
			}
			for i, lhs := range n.Lhs {
				sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr)
				if !ok || info.Selections[sel] == nil || info.Selections[sel].Obj() != field || rootVar(info, sel.X) != root {
					continue
				}
				if s, p := c.trace(body, n.Rhs[i]); s != "" {
					src, pos, assigned = s, p, n.Pos()
				}
			}
		case *ast.CallExpr:
			if !assigned.IsValid() || n.Pos() < assigned || n.Pos() > read.Pos() || !isDBWrite(n) {
				return true
			}
			for _, arg := range n.Args {
				ast.Inspect(arg, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok && info.Uses[id] == root {
						persisted = true
					}
					return !persisted
				})
			}
		}
		return true
	})
	if persisted {
		return "", token.NoPos
	}
	return src, pos
}

func isDBWrite(call *ast.CallExpr) bool {
	name := ""
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.SelectorExpr:
		name = f.Sel.Name
	case *ast.Ident:
		name = f.Name
	}
	for _, w := range dbWrites {
		if strings.HasPrefix(name, w) {
			return true
		}
	}
	return false
}

// rootVar returns the variable a selector chain starts at.
func rootVar(info *types.Info, e ast.Expr) *types.Var {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.Ident:
			v, _ := info.Uses[x].(*types.Var)
			return v
		default:
			return nil
		}
	}
}
