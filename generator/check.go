package generator

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"

	"github.com/oncekit/once/internal/directive"
)

// param is one parameter of the wrapped function, after its context.
type param struct {
	name     string // as in F, or a made-up name where F has none
	typ      types.Type
	variadic bool
	supplied bool // the pgx.Tx the guard supplies: not a parameter of the wrapper
}

// keyExpr is a type-checked expression from a directive.
type keyExpr struct {
	src  directive.Expr
	expr ast.Expr
	info *types.Info
	typ  types.Type
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
	keys    []keyExpr
	scope   *keyExpr
	fprint  []keyExpr
	capX    *keyExpr
	nX      *keyExpr
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
	// typeErrs are the package's own type errors, tolerated unless a guarded function's
	// signature is affected.
	typeErrs []string
}

func (c *checker) errorf(pos token.Pos, format string, args ...any) {
	c.errs = append(c.errs, &directive.Error{Pos: pos, Position: c.fset.Position(pos), Msg: fmt.Sprintf(format, args...)})
}

// plan resolves g against the package's types; it returns nil after reporting errors.
func (c *checker) plan(g *Guard) *plan {
	d := g.Directive
	n := len(c.errs)
	fn, _ := c.info.Defs[d.Func.Name].(*types.Func)
	if fn == nil {
		c.errorf(d.Func.Name.Pos(), "%s: no type information", d.FuncName())
		return nil
	}
	sig := fn.Type().(*types.Signature)
	p := &plan{g: g, fn: fn}
	if sig.TypeParams().Len() > 0 || sig.RecvTypeParams().Len() > 0 {
		c.errorf(d.Func.Name.Pos(), "//once:%s on %s: a generic function cannot be guarded: guard a non-generic function that calls it", d.Kind, d.FuncName())
		return nil
	}
	if d.Func.Body == nil {
		c.errorf(d.Func.Name.Pos(), "//once:%s on %s: a function without a body cannot be guarded", d.Kind, d.FuncName())
		return nil
	}

	if invalidIn(sig) {
		msg := "its signature does not type-check"
		for _, e := range c.typeErrs {
			msg += ": " + e
			break
		}
		c.errorf(d.Func.Name.Pos(), "//once:%s on %s: %s", d.Kind, d.FuncName(), msg)
		return nil
	}

	// Parameters: context first; the rest pass through, except the pgx.Tx the guard supplies.
	ps := sig.Params()
	if ps.Len() == 0 || !isContext(ps.At(0).Type()) {
		c.errorf(d.Func.Name.Pos(), "//once:%s on %s: its first parameter must be a context.Context, which the guard passes on", d.Kind, d.FuncName())
		return nil
	}
	taken := map[string]bool{}
	if r := sig.Recv(); r != nil {
		p.recv = r
		_, p.recvPtr = r.Type().(*types.Pointer)
		taken[r.Name()] = true
	}
	for i := range ps.Len() {
		taken[ps.At(i).Name()] = true
	}
	supplies := d.Kind == directive.Transaction || d.HasTable()
	txAt := -1
	for i := 1; i < ps.Len(); i++ {
		v := ps.At(i)
		pr := param{name: v.Name(), typ: v.Type(), variadic: sig.Variadic() && i == ps.Len()-1}
		if pr.name == "" || pr.name == "_" {
			pr.name = fresh(fmt.Sprintf("p%d", i), taken)
		}
		if supplies && isPgxTx(v.Type()) {
			if txAt >= 0 {
				c.errorf(d.Func.Name.Pos(), "//once:%s on %s: two pgx.Tx parameters; the guard supplies one", d.Kind, d.FuncName())
				return nil
			}
			txAt = i
			pr.supplied = true
		}
		p.params = append(p.params, pr)
	}
	if supplies && txAt < 0 {
		why := "the guard runs it in the transaction that holds the lock"
		if d.HasTable() {
			why = "the guard runs its INSERT in a transaction and commits it only when a row came back"
		}
		c.errorf(d.Func.Name.Pos(), "//once:%s on %s: it must take a pgx.Tx: %s", d.Kind, d.FuncName(), why)
		return nil
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

	// Results: error, or (T, error).
	rs := sig.Results()
	switch {
	case rs.Len() == 1 && isError(rs.At(0).Type()):
	case rs.Len() == 2 && isError(rs.At(1).Type()):
		p.result = rs.At(0).Type()
	default:
		c.errorf(d.Func.Name.Pos(), "//once:%s on %s: it must return error or (T, error), so the guard can tell a failure from a result", d.Kind, d.FuncName())
		return nil
	}

	scopePos := d.Func.Body.Lbrace
	for _, k := range d.Key {
		if x := c.expr(d, "key", k, scopePos, p); x != nil {
			c.checkEncodable(d, "key", x)
			p.keys = append(p.keys, *x)
		}
	}
	if d.Scope != nil {
		if x := c.expr(d, "scope", *d.Scope, scopePos, p); x != nil {
			c.checkEncodable(d, "scope", x)
			p.scope = x
		}
	}
	for _, f := range d.Fingerprint {
		if x := c.expr(d, "fingerprint", f, scopePos, p); x != nil {
			p.fprint = append(p.fprint, *x)
		}
	}
	if d.Kind == directive.Statement && !d.HasTable() {
		if !d.Cap.IsLit {
			p.capX = c.intExpr(d, "cap", d.Cap.Expr, scopePos, p)
		}
		if !d.N.IsLit {
			p.nX = c.intExpr(d, "n", d.N.Expr, scopePos, p)
		}
	}
	if len(c.errs) > n {
		return nil
	}
	used := map[*types.Var]bool{}
	for _, k := range p.keys {
		for _, obj := range k.info.Uses {
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

// invalidIn reports a signature holding a type that did not type-check.
func invalidIn(sig *types.Signature) bool {
	bad := false
	var visit func(t types.Type)
	visit = func(t types.Type) {
		if bad || t == nil {
			return
		}
		switch t := t.(type) {
		case *types.Basic:
			bad = t.Kind() == types.Invalid
		case *types.Pointer:
			visit(t.Elem())
		case *types.Slice:
			visit(t.Elem())
		case *types.Array:
			visit(t.Elem())
		case *types.Map:
			visit(t.Key())
			visit(t.Elem())
		case *types.Chan:
			visit(t.Elem())
		case *types.Named:
			for i := range t.TypeArgs().Len() {
				visit(t.TypeArgs().At(i))
			}
		case *types.Signature:
			for i := range t.Params().Len() {
				visit(t.Params().At(i).Type())
			}
			for i := range t.Results().Len() {
				visit(t.Results().At(i).Type())
			}
		}
	}
	visit(sig)
	if r := sig.Recv(); r != nil {
		visit(r.Type())
	}
	return bad
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

// expr parses and type-checks one directive expression in the function's scope.
func (c *checker) expr(d *directive.Directive, arg string, e directive.Expr, scope token.Pos, p *plan) *keyExpr {
	efset := token.NewFileSet()
	x, err := parser.ParseExprFrom(efset, "", e.Text, parser.SkipObjectResolution)
	if err != nil { // directive.ParseFile has parsed it once already
		c.errorf(e.Pos, "//once:%s: %s=: %v", d.Kind, arg, err)
		return nil
	}
	at := func(pos token.Pos) token.Pos {
		if !pos.IsValid() {
			return e.Pos
		}
		return e.Pos + token.Pos(efset.Position(pos).Offset)
	}
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{},
		Uses:  map[*ast.Ident]types.Object{},
	}
	if err := types.CheckExpr(efset, c.pkg, scope, x, info); err != nil {
		pos, msg := e.Pos, err.Error()
		if te, ok := err.(types.Error); ok {
			pos, msg = at(te.Pos), te.Msg
		}
		c.errorf(pos, "//once:%s on %s: %s=%s: %s (a key may use the function's parameters)", d.Kind, d.FuncName(), arg, e.Text, msg)
		return nil
	}
	ok := true
	ast.Inspect(x, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if why := refusedCall(n, info); why != "" {
				c.errorf(at(n.Pos()), "//once:%s on %s: %s=%s calls %s: a retry must produce the same key, so it may not come from the clock or a random source", d.Kind, d.FuncName(), arg, e.Text, why)
				ok = false
			}
		case *ast.Ident:
			if v, isVar := info.Uses[n].(*types.Var); isVar {
				if isSuppliedTx(v, p) {
					c.errorf(at(n.Pos()), "//once:%s on %s: %s= uses %s, which the guard supplies: key on the function's own arguments", d.Kind, d.FuncName(), arg, n.Name)
					ok = false
				}
				if isContext(v.Type()) {
					c.errorf(at(n.Pos()), "//once:%s on %s: %s= uses the context %s: key on the function's own arguments", d.Kind, d.FuncName(), arg, n.Name)
					ok = false
				}
			}
		}
		return true
	})
	if !ok {
		return nil
	}
	if _, err := exprCode(x, info); err != nil {
		c.errorf(e.Pos, "//once:%s on %s: %s=%s: %v", d.Kind, d.FuncName(), arg, e.Text, err)
		return nil
	}
	return &keyExpr{src: e, expr: x, info: info, typ: info.Types[x].Type}
}

func isSuppliedTx(v *types.Var, p *plan) bool {
	for _, pr := range p.params {
		if pr.supplied && pr.name == v.Name() && isPgxTx(v.Type()) {
			return true
		}
	}
	return false
}

// intExpr checks a statement's cap= or n= expression: an integer.
func (c *checker) intExpr(d *directive.Directive, arg string, e directive.Expr, scope token.Pos, p *plan) *keyExpr {
	x := c.expr(d, arg, e, scope, p)
	if x == nil {
		return nil
	}
	if b, ok := x.typ.Underlying().(*types.Basic); !ok || b.Info()&types.IsInteger == 0 {
		c.errorf(e.Pos, "//once:%s on %s: %s=%s has type %s: it must be an integer", d.Kind, d.FuncName(), arg, e.Text, x.typ)
		return nil
	}
	return x
}

// checkEncodable reports a key part whose type once.EncodeKey refuses.
func (c *checker) checkEncodable(d *directive.Directive, arg string, x *keyExpr) {
	if encodable(x.typ) {
		return
	}
	c.errorf(x.src.Pos, "//once:%s on %s: %s=%s has type %s, which once.EncodeKey cannot encode: use a string, integer, bool, [16]byte UUID, time.Time, once.KeyPart or encoding.TextMarshaler",
		d.Kind, d.FuncName(), arg, x.src.Text, types.TypeString(x.typ, types.RelativeTo(c.pkg)))
}

// encodable mirrors once.EncodeKey's rules (runtime/key.go) on static types.
func encodable(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		if hasMethod(t, "OnceKey") || hasMethod(t, "MarshalText") {
			return true
		}
		t = p.Elem()
		if _, ok := t.Underlying().(*types.Pointer); ok {
			return encodable(t)
		}
	}
	if isNamed(t, "time", "Time") || hasMethod(t, "OnceKey") || hasMethod(t, "MarshalText") {
		return true
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&(types.IsInteger|types.IsString|types.IsBoolean) != 0 && u.Kind() != types.UntypedNil
	case *types.Array:
		b, ok := u.Elem().Underlying().(*types.Basic)
		return u.Len() == 16 && ok && b.Kind() == types.Uint8
	}
	return false
}

// hasMethod reports whether t's method set has the method of KeyPart (OnceKey() string) or
// of encoding.TextMarshaler (MarshalText() ([]byte, error)) called name.
func hasMethod(t types.Type, name string) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, false, nil, name)
	f, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	sig := f.Type().(*types.Signature)
	if sig.Params().Len() != 0 {
		return false
	}
	switch name {
	case "OnceKey":
		return sig.Results().Len() == 1 && types.Identical(sig.Results().At(0).Type(), types.Typ[types.String])
	case "MarshalText":
		return sig.Results().Len() == 2 && isError(sig.Results().At(1).Type()) &&
			types.Identical(sig.Results().At(0).Type(), types.NewSlice(types.Typ[types.Byte]))
	}
	return false
}

// refusedCall names the callee of call when it reads the clock or a random source, or "".
func refusedCall(call *ast.CallExpr, info *types.Info) string {
	var id *ast.Ident
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.IndexExpr:
		if s, ok := f.X.(*ast.SelectorExpr); ok {
			id = s.Sel
		}
	default:
		return ""
	}
	if id == nil {
		return ""
	}
	fn, ok := info.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return ""
	}
	path, name := fn.Pkg().Path(), fn.Name()
	switch {
	case path == "time" && (name == "Now" || name == "Since" || name == "Until"):
	case path == "math/rand" || path == "math/rand/v2" || path == "crypto/rand":
	case isIDPackage(path) && (strings.HasPrefix(name, "New") || strings.HasPrefix(name, "Must") || strings.HasPrefix(name, "Make")):
	default:
		return ""
	}
	return path + "." + name
}

// isIDPackage reports a package of random identifiers (UUID, ULID, KSUID, XID, nanoid).
func isIDPackage(path string) bool {
	last := path[strings.LastIndex(path, "/")+1:]
	for _, s := range []string{"uuid", "ulid", "ksuid", "xid", "nanoid", "shortid"} {
		if strings.Contains(strings.ToLower(last), s) || strings.Contains(strings.ToLower(path), "/"+s) {
			return true
		}
	}
	return false
}

func isNamed(t types.Type, path, name string) bool {
	t = types.Unalias(t)
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == path && n.Obj().Name() == name
}

func isContext(t types.Type) bool { return isNamed(t, "context", "Context") }

func isPgxTx(t types.Type) bool { return isNamed(t, pgxPath, "Tx") }

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}
