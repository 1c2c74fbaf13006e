package once005

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// naturalKey reports whether the row ins inserts is keyed by what the function was
// given: the model's primary key, declared by its tags, is not made by the database (no
// autoincrement, serial, identity or default), and every one of its fields holds, at the
// insert, a value from the function's input (a parameter, a decoded request, the
// arguments of a constructor) or a value set from it, never a new one (a UUID, a random
// name, the time; see FreshFact). A retry, a double submit or a second concurrent
// request for the same thing then makes the same key, and the second insert fails on
// the primary key: the race ends in an error, not in a duplicate row. A key the function
// leaves to the database, or sets to a new value on any path, stops nothing.
//
// An integer key field counts only where the function sets it: the ORMs number a zero
// one. A model whose hook (BeforeInsert, BeforeCreate, BeforeSave, BeforeAppendModel)
// sets a key field to a new value, and a key that reaches the insert through a function
// value or a path the function does not show, count as new.
func (c *checker) naturalKey(fn *effects.Func, ins *effects.SQLOp) bool {
	if ins.Stmt.Model == "" {
		return false
	}
	m := c.models[ins.Stmt.Model]
	if m == nil {
		return false
	}
	var key []KeyField
	for _, u := range m.Uniques {
		if u.Primary {
			key = u.Fields
		}
	}
	if len(key) == 0 {
		return false
	}
	for _, f := range key {
		if f.Generated {
			return false
		}
	}
	info := c.pass.TypesInfo
	vals, named := insertedValues(info, ins.Call, ins.Stmt.Model)
	if len(vals) == 0 || c.hookMakesKey(named, key) {
		return false
	}
	t := &keyTrace{
		c:      c,
		info:   info,
		body:   fn.Decl.Body,
		before: ins.Call.Pos(),
		key:    key,
		params: params(info, fn.Decl),
		seen:   map[*types.Var]bool{},
	}
	t.fresh = newFreshVals(info, c.freshFact, true)
	t.fresh.scan(fn.Decl.Body, ins.Call.Pos())
	if ins.Via != nil && t.setsKey(ins.Via) {
		return false // the helper that inserts gives the row a new key
	}
	for _, e := range vals {
		if !t.complete(t.origin(e, 0)) {
			return false
		}
	}
	return !t.bad
}

// freshFact returns what is known of fn's new values, in this package or through a fact.
func (c *checker) freshFact(fn *types.Func) *FreshFact {
	return c.fresh.of(fn)
}

// hookMakesKey reports a hook method of the model that sets a key field to a new value
// before the ORM inserts it.
func (c *checker) hookMakesKey(named *types.Named, key []KeyField) bool {
	if named == nil {
		return true
	}
	for _, name := range []string{"BeforeInsert", "BeforeCreate", "BeforeSave", "BeforeAppendModel"} {
		obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(named), true, named.Obj().Pkg(), name)
		if fn, ok := obj.(*types.Func); ok {
			if f := c.freshFact(fn); f != nil && setsAny(f, key) {
				return true
			}
		}
	}
	return false
}

func setsAny(f *FreshFact, key []KeyField) bool {
	for _, k := range key {
		if slices.Contains(f.Fields, k.Name) {
			return true
		}
	}
	return false
}

// insertedValues returns the expressions of the rows the insert call writes, those of
// the model's type (&u in engine.Insert(&u), users in db.Create(users), g in a helper's
// AddGroup(g)), found among the arguments of the call and of the builder chain it ends.
func insertedValues(info *types.Info, call *ast.CallExpr, model string) ([]ast.Expr, *types.Named) {
	var out []ast.Expr
	var named *types.Named
	ast.Inspect(call, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		for _, arg := range c.Args {
			if t := sqltext.ModelType(info.TypeOf(arg)); t != nil && t.Obj().Pkg().Path()+"."+t.Obj().Name() == model {
				named = t
				out = append(out, arg)
			}
		}
		return true
	})
	return out, named
}

// stripAddr removes & and * from e: the row a pointer names.
func stripAddr(e ast.Expr) ast.Expr {
	e = ast.Unparen(e)
	for {
		switch x := e.(type) {
		case *ast.UnaryExpr:
			if x.Op != token.AND {
				return e
			}
			e = ast.Unparen(x.X)
		case *ast.StarExpr:
			e = ast.Unparen(x.X)
		default:
			return e
		}
	}
}

// params returns the parameters and receiver of decl and of the function literals in it.
func params(info *types.Info, decl *ast.FuncDecl) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	add := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, name := range f.Names {
				if v, ok := info.Defs[name].(*types.Var); ok {
					out[v] = true
				}
			}
		}
	}
	add(decl.Recv)
	add(decl.Type.Params)
	ast.Inspect(decl.Body, func(n ast.Node) bool {
		if fl, ok := n.(*ast.FuncLit); ok {
			add(fl.Type.Params)
		}
		return true
	})
	return out
}

// keyTrace follows the rows an insert writes back to where the function made them.
type keyTrace struct {
	c      *checker
	info   *types.Info
	body   *ast.BlockStmt
	before token.Pos
	key    []KeyField
	params map[*types.Var]bool
	fresh  *freshVals
	seen   map[*types.Var]bool
	// bad: some row gets a new key, or one the trace cannot follow.
	bad bool
}

// setsKey reports whether fn sets a key field to a new value on a row it makes or is
// given.
func (t *keyTrace) setsKey(fn *types.Func) bool {
	f := t.c.freshFact(fn)
	return f != nil && setsAny(f, t.key)
}

// keyState is what is known of one key field of a value.
type keyState int

const (
	unset  keyState = iota // the zero value: a literal or declaration that left it out
	filled                 // from the input: a parameter, a constructor, a decoder
	set                    // assigned a value that is not new
)

// natural reports whether every row held in v reaches the insert with each key field
// from the input or set from it, and none set to a new value.
func (t *keyTrace) natural(v *types.Var, depth int) bool {
	if t.seen[v] {
		return true // an append of v to itself: judged where v is made
	}
	if depth > 6 {
		return false
	}
	t.seen[v] = true
	states := make([]keyState, len(t.key))
	merge := func(s []keyState) {
		if len(s) != len(states) {
			return // nothing known: bad is set
		}
		for i := range states {
			states[i] = max(states[i], s[i])
		}
	}
	defs := 0
	if t.params[v] {
		merge(t.all(filled))
		defs++
	}
	ast.Inspect(t.body, func(n ast.Node) bool {
		if t.bad || n == nil || n.Pos() >= t.before {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				lhs = ast.Unparen(lhs)
				if id, isIdent := lhs.(*ast.Ident); isIdent && t.info.ObjectOf(id) == v {
					defs++
					if len(n.Lhs) == len(n.Rhs) {
						merge(t.origin(n.Rhs[i], depth))
					} else {
						merge(t.origin(n.Rhs[0], depth))
					}
					continue
				}
				sel, isSel := lhs.(*ast.SelectorExpr)
				if !isSel || rootVar(t.info, sel.X) != v {
					continue
				}
				if k := t.keyIndex(sel); k >= 0 {
					rhs := n.Rhs[0]
					if len(n.Lhs) == len(n.Rhs) {
						rhs = n.Rhs[i]
					}
					if t.fresh.fresh(rhs) {
						t.fail() // v.Name = uuid(): a new key on this path
					}
					states[k] = max(states[k], set)
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if t.info.Defs[name] != v {
					continue
				}
				defs++
				switch {
				case len(n.Values) == len(n.Names):
					merge(t.origin(n.Values[i], depth))
				case len(n.Values) == 1:
					merge(t.origin(n.Values[0], depth))
				default:
					merge(t.all(unset))
				}
			}
		case *ast.RangeStmt:
			if id, isIdent := n.Value.(*ast.Ident); isIdent && t.info.ObjectOf(id) == v {
				defs++
				merge(t.origin(n.X, depth))
			}
		case *ast.CallExpr:
			// A call given v, its address or a method of it may set its fields: a
			// decoder fills them from the input (json.Unmarshal(body, &v)); one that
			// makes a new key, or a function value, makes the key new.
			if !t.given(n, v) {
				return true
			}
			if _, builtin := typeutil.Callee(t.info, n).(*types.Builtin); builtin {
				return true
			}
			if tv, found := t.info.Types[n.Fun]; found && tv.IsType() {
				return true // a conversion
			}
			callee, isFunc := typeutil.Callee(t.info, n).(*types.Func)
			if !isFunc || t.setsKey(callee) {
				t.fail()
				return false
			}
			merge(t.all(filled))
		}
		return true
	})
	// A field a new value was assigned to in one branch makes the key new on that path.
	for _, k := range t.key {
		if t.fresh.fields[fieldKey{v, k.Name}] || t.fresh.vars[v] {
			t.fail()
		}
	}
	return defs > 0 && t.complete(states)
}

// origin returns what the expression e, one definition of a row, makes of each key
// field.
func (t *keyTrace) origin(e ast.Expr, depth int) []keyState {
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return t.origin(x.X, depth)
		}
	case *ast.StarExpr:
		return t.origin(x.X, depth)
	case *ast.Ident:
		if w, isVar := t.info.Uses[x].(*types.Var); isVar {
			if t.natural(w, depth+1) {
				return t.all(set)
			}
			t.fail()
			return nil
		}
		if _, isNil := t.info.Uses[x].(*types.Nil); isNil {
			return t.all(unset)
		}
	case *ast.SelectorExpr, *ast.IndexExpr:
		// A row taken from another value (req.User, users[i], byName[n]): as
		// natural as that value.
		if w := rootVar(t.info, x); w != nil {
			if t.natural(w, depth+1) {
				return t.all(filled)
			}
		}
		t.fail()
		return nil
	case *ast.CompositeLit:
		return t.literal(x, depth)
	case *ast.CallExpr:
		if tv, found := t.info.Types[x.Fun]; found && tv.IsType() && len(x.Args) == 1 {
			return t.origin(x.Args[0], depth) // a conversion
		}
		if id, isIdent := ast.Unparen(x.Fun).(*ast.Ident); isIdent {
			if b, isBuiltin := t.info.Uses[id].(*types.Builtin); isBuiltin {
				if b.Name() != "append" {
					t.fail()
					return nil
				}
				s := t.all(filled)
				for _, arg := range x.Args {
					for i, a := range t.origin(arg, depth) {
						s[i] = min(s[i], a)
					}
				}
				return s
			}
		}
		callee, isFunc := typeutil.Callee(t.info, x).(*types.Func)
		if !isFunc || t.setsKey(callee) {
			t.fail()
			return nil
		}
		return t.all(filled) // a constructor: the key is what it was given
	}
	t.fail()
	return nil
}

// complete reports whether states give every key field a value that is not new: set,
// or, for a field that is not an integer, filled from the input.
func (t *keyTrace) complete(states []keyState) bool {
	if t.bad || len(states) != len(t.key) {
		return false
	}
	for i, k := range t.key {
		if states[i] == unset || (k.Int && states[i] != set) {
			return false
		}
	}
	return true
}

// all returns s for every key field.
func (t *keyTrace) all(s keyState) []keyState {
	out := make([]keyState, len(t.key))
	for i := range out {
		out[i] = s
	}
	return out
}

// given reports whether call is handed v: as an argument, by address, or as the
// receiver of a method.
func (t *keyTrace) given(call *ast.CallExpr, v *types.Var) bool {
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if s, ok := t.info.Selections[sel]; ok && s.Kind() == types.MethodVal && rootVar(t.info, sel.X) == v {
			return true
		}
	}
	for _, arg := range call.Args {
		a := ast.Unparen(arg)
		if u, ok := a.(*ast.UnaryExpr); ok && u.Op == token.AND {
			a = ast.Unparen(u.X)
		}
		if id, ok := a.(*ast.Ident); ok && t.info.Uses[id] == v {
			return true
		}
	}
	return false
}

// literal reads a composite literal: a struct's key fields as written, a slice's rows
// each as made.
func (t *keyTrace) literal(lit *ast.CompositeLit, depth int) []keyState {
	typ := t.info.TypeOf(lit)
	if typ == nil {
		return nil
	}
	switch typ.Underlying().(type) {
	case *types.Slice, *types.Array:
		s := make([]keyState, len(t.key))
		for i := range s {
			s[i] = filled
		}
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			for i, a := range t.origin(el, depth) {
				s[i] = min(s[i], a)
			}
		}
		return s
	}
	s := make([]keyState, len(t.key))
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil // positional: read no further
		}
		id, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		for i, k := range t.key {
			if k.Name != id.Name {
				continue
			}
			if t.fresh.fresh(kv.Value) {
				t.fail() // a new key
				return nil
			}
			s[i] = set
		}
	}
	return s
}

// keyIndex returns the index in the key of the field sel sets, or -1.
func (t *keyTrace) keyIndex(sel *ast.SelectorExpr) int {
	s, ok := t.info.Selections[sel]
	if !ok || s.Kind() != types.FieldVal {
		return -1
	}
	for i, k := range t.key {
		if k.Name == sel.Sel.Name {
			return i
		}
	}
	return -1
}

// fail records a row whose key is new, or that the trace cannot follow.
func (t *keyTrace) fail() { t.bad = true }
