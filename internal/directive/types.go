package directive

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// PgxPath is the import path of pgx, whose Tx the transaction and table= guards supply.
const PgxPath = "github.com/jackc/pgx/v5"

// Typed is a directive resolved against its package's types: the guarded function's
// signature as its guard sees it, and each expression of the directive type-checked in the
// function's scope.
type Typed struct {
	Directive *Directive
	// Obj is the guarded function or method; Sig its signature.
	Obj *types.Func
	Sig *types.Signature
	// Tx is the index in Sig.Params() of the pgx.Tx parameter the guard supplies
	// (transaction and table= forms), or -1.
	Tx int
	// Result is T for a function returning (T, error); nil for one returning error.
	Result types.Type
	// Key, Scope, Fingerprint, Cap and N are the typed key=, scope=, fingerprint=, and a
	// statement's cap= and n= when they are expressions (nil when literals).
	Key         []TypedExpr
	Scope       *TypedExpr
	Fingerprint []TypedExpr
	Cap, N      *TypedExpr
	// Seal is forever's typed seal=, a once.Sealer in the package's scope (nil without it).
	Seal *TypedExpr
}

// TypedExpr is one directive expression, parsed and type-checked in the guarded function's
// scope.
type TypedExpr struct {
	// Expr is the expression's text and its position in the file.
	Expr
	// AST is the parsed expression. It was parsed on its own, so its positions are not
	// positions in the file; Info holds its types and the objects its identifiers use.
	AST  ast.Expr
	Info *types.Info
	// Type is the expression's type.
	Type types.Type
}

// CheckTypes resolves d against the types of its package (pkg, with info holding at least
// Defs for the package's files) and returns it typed, or every mistake found. Both tools
// call it, so a key that does not type-check reads the same from each:
//
//   - the function is not generic, has a body, takes a context.Context first and returns
//     error or (T, error); transaction and table= forms take one pgx.Tx, which the guard
//     supplies;
//   - key=, scope=, fingerprint=, cap= and n= type-check in the function's scope (its
//     parameters, receiver and the package's names), use neither the context, the
//     supplied pgx.Tx nor a named result, call nothing that reads the clock or a random source, and hold only
//     the forms a generated wrapper can repeat (no function or composite literals, no channel
//     receives);
//   - each key= and scope= part has a type once.Key encodes, each fingerprint= part a
//     type encoding/json encodes, and cap= and n= are integers;
//   - forever's seal= type-checks in the package's scope (a package-level variable, or a
//     call of a package-level function) to a once.Sealer, and it and result= are only on a
//     function returning (T, error), seal= only where the value itself is recorded.
func CheckTypes(fset *token.FileSet, pkg *types.Package, info *types.Info, d *Directive) (*Typed, []*Error) {
	c := &typeChecker{fset: fset, pkg: pkg, d: d}
	t := c.check(info)
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return t, nil
}

type typeChecker struct {
	fset *token.FileSet
	pkg  *types.Package
	d    *Directive
	errs []*Error
}

func (c *typeChecker) errorf(pos token.Pos, format string, args ...any) {
	c.errs = append(c.errs, errorf(c.fset, pos, format, args...))
}

// on is the head of a message about the directive: "//once:kind on Func".
func (c *typeChecker) on() string { return fmt.Sprintf("//once:%s on %s", c.d.Kind, c.d.FuncName()) }

func (c *typeChecker) check(info *types.Info) *Typed {
	d := c.d
	var obj *types.Func
	if info != nil {
		obj, _ = info.Defs[d.Func.Name].(*types.Func)
	}
	if obj == nil {
		c.errorf(d.Func.Name.Pos(), "%s: no type information", c.on())
		return nil
	}
	if d.Spec() == nil {
		c.errorf(d.Slash, "%s: unknown kind (kinds: %s)", c.on(), kindList())
		return nil
	}
	sig := obj.Type().(*types.Signature)
	t := &Typed{Directive: d, Obj: obj, Sig: sig, Tx: -1}
	if sig.TypeParams().Len() > 0 || sig.RecvTypeParams().Len() > 0 {
		c.errorf(d.Func.Name.Pos(), "%s: a generic function cannot be guarded: guard a non-generic function that calls it", c.on())
		return nil
	}
	if d.Func.Body == nil {
		c.errorf(d.Func.Name.Pos(), "%s: a function without a body cannot be guarded", c.on())
		return nil
	}
	if v := invalidVar(sig); v != nil {
		pos, text := v.Pos(), ""
		if x := fieldType(d.Func, v.Pos()); x != nil {
			pos, text = x.Pos(), " ("+types.ExprString(x)+")"
		}
		c.errorf(pos, "%s: the type of %s%s does not type-check: fix it first", c.on(), varName(v), text)
		return nil
	}

	ps := sig.Params()
	if ps.Len() == 0 || !isContext(ps.At(0).Type()) {
		c.errorf(d.Func.Name.Pos(), "%s: its first parameter must be a context.Context, which the guard passes on", c.on())
		return nil
	}
	if why := d.Spec().SuppliesTx; why != "" || d.HasTable() {
		for i := 1; i < ps.Len(); i++ {
			if !isPgxTx(ps.At(i).Type()) {
				continue
			}
			if t.Tx >= 0 {
				c.errorf(d.Func.Name.Pos(), "%s: two pgx.Tx parameters; the guard supplies one", c.on())
				return nil
			}
			t.Tx = i
		}
		if t.Tx < 0 {
			if d.HasTable() {
				why = "the guard runs its INSERT in a transaction and commits it only when a row came back"
			}
			c.errorf(d.Func.Name.Pos(), "%s: it must take a pgx.Tx: %s", c.on(), why)
			return nil
		}
	}
	rs := sig.Results()
	switch {
	case rs.Len() == 1 && isError(rs.At(0).Type()):
	case rs.Len() == 2 && isError(rs.At(1).Type()):
		t.Result = rs.At(0).Type()
	default:
		c.errorf(d.Func.Name.Pos(), "%s: it must return error or (T, error), so the guard can tell a failure from a result", c.on())
		return nil
	}

	scope := d.Func.Body.Lbrace
	for _, k := range d.Key {
		if x := c.expr("key", k, scope, t); x != nil {
			c.checkKeyPart("key", x)
			t.Key = append(t.Key, *x)
		}
	}
	if d.Scope != nil {
		if x := c.expr("scope", *d.Scope, scope, t); x != nil {
			c.checkKeyPart("scope", x)
			t.Scope = x
		}
	}
	for _, f := range d.Fingerprint {
		if x := c.expr("fingerprint", f, scope, t); x != nil {
			c.checkJSON(x)
			t.Fingerprint = append(t.Fingerprint, *x)
		}
	}
	if !d.Cap.IsLit && d.Cap.Expr.Text != "" {
		t.Cap = c.intExpr("cap", d.Cap.Expr, scope, t)
	}
	if !d.N.IsLit && d.N.Expr.Text != "" {
		t.N = c.intExpr("n", d.N.Expr, scope, t)
	}
	c.checkRecord(t)
	return t
}

// checkRecord checks forever's result= and seal=: what is recorded of the function's value.
func (c *typeChecker) checkRecord(t *Typed) {
	d := c.d
	for _, arg := range []string{"result", "seal"} {
		if a, ok := d.Arg(arg); ok && t.Result == nil {
			c.errorf(a.Pos, "%s: %s= says how its result is recorded, and it returns only an error: leave %s= out", c.on(), arg, arg)
			return
		}
	}
	if d.Seal == nil {
		return
	}
	if d.Result != "" && d.Result != "value" {
		a, _ := d.Arg("seal")
		c.errorf(a.Pos, "%s: seal= seals the recorded value, and result=%s records none: leave one out", c.on(), d.Result)
		return
	}
	// In the package's scope: the sealer is the package's, not a call's.
	x := c.expr("seal", *d.Seal, token.NoPos, t)
	if x == nil {
		return
	}
	if b, ok := x.Type.(*types.Basic); ok && b.Kind() == types.UntypedNil {
		c.errorf(x.Pos, "%s: seal=nil seals nothing: leave seal= out", c.on())
		return
	}
	// The wrapper writes the expression inside a function whose parameters are the guarded
	// function's: one of theirs with a name the expression uses would shadow it there.
	var hidden *types.Var
	ast.Inspect(x.AST, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && hidden == nil {
			if obj := x.Info.Uses[id]; obj != nil {
				if v := shadowingVar(t.Sig, obj.Name()); v != nil && v != obj {
					hidden = v
				}
			}
		}
		return hidden == nil
	})
	if hidden != nil {
		c.errorf(x.Pos, "%s: seal=%s uses a package-level name that the parameter %s hides in the wrapper: rename one", c.on(), x.Text, hidden.Name())
		return
	}
	if !types.AssignableTo(x.Type, sealerType(t.Sig.Params().At(0).Type())) {
		c.errorf(x.Pos, "%s: seal=%s has type %s, which is not a once.Sealer: it needs the methods Seal and Open, each func(context.Context, []byte) ([]byte, error)",
			c.on(), x.Text, types.TypeString(x.Type, types.RelativeTo(c.pkg)))
		return
	}
	t.Seal = x
}

// shadowingVar returns sig's receiver or parameter called name, or nil.
func shadowingVar(sig *types.Signature, name string) *types.Var {
	if r := sig.Recv(); r != nil && r.Name() == name {
		return r
	}
	for i := range sig.Params().Len() {
		if p := sig.Params().At(i); p.Name() == name {
			return p
		}
	}
	return nil
}

// sealerType is once.Sealer's method set, built from context.Context (ctx, the guarded
// function's first parameter's type): the package need not import the runtime yet.
func sealerType(ctx types.Type) *types.Interface {
	bytes := types.NewSlice(types.Typ[types.Byte])
	method := func(name string) *types.Func {
		params := types.NewTuple(types.NewVar(token.NoPos, nil, "ctx", ctx), types.NewVar(token.NoPos, nil, "b", bytes))
		results := types.NewTuple(types.NewVar(token.NoPos, nil, "", bytes), types.NewVar(token.NoPos, nil, "", types.Universe.Lookup("error").Type()))
		return types.NewFunc(token.NoPos, nil, name, types.NewSignatureType(nil, nil, nil, params, results, false))
	}
	return types.NewInterfaceType([]*types.Func{method("Open"), method("Seal")}, nil).Complete()
}

// invalidVar returns the receiver, parameter or result of sig whose type did not
// type-check, or nil.
func invalidVar(sig *types.Signature) *types.Var {
	if r := sig.Recv(); r != nil && invalidIn(r.Type()) {
		return r
	}
	for _, list := range []*types.Tuple{sig.Params(), sig.Results()} {
		for i := range list.Len() {
			if invalidIn(list.At(i).Type()) {
				return list.At(i)
			}
		}
	}
	return nil
}

func varName(v *types.Var) string {
	if v.Name() == "" || v.Name() == "_" {
		return "an unnamed parameter or result"
	}
	return v.Name()
}

// fieldType returns the type expression of fn's receiver, parameter or result declared at
// pos, or nil.
func fieldType(fn *ast.FuncDecl, pos token.Pos) ast.Expr {
	for _, list := range []*ast.FieldList{fn.Recv, fn.Type.Params, fn.Type.Results} {
		if list == nil {
			continue
		}
		for _, f := range list.List {
			if f.Type.Pos() == pos {
				return f.Type
			}
			for _, n := range f.Names {
				if n.Pos() == pos {
					return f.Type
				}
			}
		}
	}
	return nil
}

// invalidIn reports a type holding a part that did not type-check.
func invalidIn(t types.Type) bool {
	switch t := t.(type) {
	case *types.Basic:
		return t.Kind() == types.Invalid
	case *types.Pointer:
		return invalidIn(t.Elem())
	case *types.Slice:
		return invalidIn(t.Elem())
	case *types.Array:
		return invalidIn(t.Elem())
	case *types.Map:
		return invalidIn(t.Key()) || invalidIn(t.Elem())
	case *types.Chan:
		return invalidIn(t.Elem())
	case *types.Named:
		for i := range t.TypeArgs().Len() {
			if invalidIn(t.TypeArgs().At(i)) {
				return true
			}
		}
	case *types.Signature:
		for _, list := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range list.Len() {
				if invalidIn(list.At(i).Type()) {
					return true
				}
			}
		}
	}
	return false
}

// expr parses and type-checks one directive expression in the function's scope; it
// returns nil after reporting a mistake.
func (c *typeChecker) expr(arg string, e Expr, scope token.Pos, t *Typed) *TypedExpr {
	efset := token.NewFileSet()
	x, err := parser.ParseExprFrom(efset, "", e.Text, parser.SkipObjectResolution)
	if err != nil { // ParseFile has parsed it once already
		c.errorf(e.Pos, "//once:%s: %s=: %v", c.d.Kind, arg, err)
		return nil
	}
	// at maps a position in the expression's own file set to the file.
	at := func(pos token.Pos) token.Pos {
		if !pos.IsValid() {
			return e.Pos
		}
		return e.Pos + token.Pos(efset.Position(pos).Offset)
	}
	if n, what := unrepeatable(x); n != nil {
		c.errorf(at(n.Pos()), "%s: %s=%s: a %s has no place in %s=: use the parameters, their fields and methods, and the package's functions",
			c.on(), arg, e.Text, what, arg)
		return nil
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
		hint := "a key may use the function's parameters"
		if arg == "seal" {
			hint = "seal= names a package-level variable or calls a package-level function"
		}
		c.errorf(pos, "%s: %s=%s: %s (%s)", c.on(), arg, e.Text, msg, hint)
		return nil
	}
	ok := true
	ast.Inspect(x, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if why := refusedCall(n, info); why != "" {
				c.errorf(at(n.Pos()), "%s: %s=%s calls %s: a retry must produce the same key, so it may not come from the clock or a random source", c.on(), arg, e.Text, why)
				ok = false
			}
		case *ast.Ident:
			v, isVar := info.Uses[n].(*types.Var)
			if !isVar {
				break
			}
			if t.Tx >= 0 && v == t.Sig.Params().At(t.Tx) {
				c.errorf(at(n.Pos()), "%s: %s= uses %s, which the guard supplies: key on the function's own arguments", c.on(), arg, n.Name)
				ok = false
			}
			if isContext(v.Type()) {
				c.errorf(at(n.Pos()), "%s: %s= uses the context %s: key on the function's own arguments", c.on(), arg, n.Name)
				ok = false
			}
			if isResult(t.Sig, v) {
				// In scope inside the body, but the guard decides before the function runs.
				c.errorf(at(n.Pos()), "%s: %s= uses the result %s, which exists only once the function has run: key on the function's own arguments", c.on(), arg, n.Name)
				ok = false
			}
		}
		return true
	})
	if !ok {
		return nil
	}
	return &TypedExpr{Expr: e, AST: x, Info: info, Type: info.Types[x].Type}
}

// unrepeatable returns the first node of x that a generated wrapper cannot, or must not,
// write again: a function or composite literal (code, not a value of the arguments), or a
// channel receive (which takes a value away).
func unrepeatable(x ast.Expr) (ast.Node, string) {
	var bad ast.Node
	what := ""
	ast.Inspect(x, func(n ast.Node) bool {
		if bad != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			bad, what = n, "function literal"
		case *ast.CompositeLit:
			bad, what = n, "composite literal"
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				bad, what = n, "channel receive"
			}
		}
		return bad == nil
	})
	return bad, what
}

// intExpr checks a statement's cap= or n= expression: an integer.
func (c *typeChecker) intExpr(arg string, e Expr, scope token.Pos, t *Typed) *TypedExpr {
	x := c.expr(arg, e, scope, t)
	if x == nil {
		return nil
	}
	if b, ok := x.Type.Underlying().(*types.Basic); !ok || b.Info()&types.IsInteger == 0 {
		c.errorf(e.Pos, "%s: %s=%s has type %s: it must be an integer", c.on(), arg, e.Text, x.Type)
		return nil
	}
	return x
}

// checkKeyPart reports a key= or scope= part whose type once.Key refuses.
func (c *typeChecker) checkKeyPart(arg string, x *TypedExpr) {
	if Encodable(x.Type) {
		return
	}
	c.errorf(x.Pos, "%s: %s=%s has type %s, which once.Key cannot encode: use a string, integer, bool, [16]byte UUID, time.Time, once.KeyPart or encoding.TextMarshaler",
		c.on(), arg, x.Text, types.TypeString(x.Type, types.RelativeTo(c.pkg)))
}

// checkJSON reports a fingerprint= part that encoding/json cannot encode, which the
// runtime would refuse with ErrInvalid on every call.
func (c *typeChecker) checkJSON(x *TypedExpr) {
	why := jsonProblem(x.Type, types.RelativeTo(c.pkg), map[types.Type]bool{})
	if why == "" {
		return
	}
	c.errorf(x.Pos, "%s: fingerprint=%s has type %s, which encoding/json cannot encode: %s; fingerprint the fields that make up the input",
		c.on(), x.Text, types.TypeString(x.Type, types.RelativeTo(c.pkg)), why)
}

// Encodable reports whether once.Key encodes a value of type t: it mirrors
// once.Key's rules (a string, integer or bool, a [16]byte UUID, a time.Time, a KeyPart or
// an encoding.TextMarshaler, a named type of one of those, or a pointer to one) on static
// types.
func Encodable(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		if hasMethod(t, "OnceKey") || hasMethod(t, "MarshalText") {
			return true
		}
		t = p.Elem()
		if _, ok := t.Underlying().(*types.Pointer); ok {
			return Encodable(t)
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

// EncodableWithoutError reports a type once.Key encodes without the chance of an
// error, whatever the value: a time.Time, a KeyPart, a [16]byte, or a string, integer or bool
// that is no encoding.TextMarshaler (whose MarshalText may fail). Pointers (which may be
// nil), interfaces and text marshalers are not, though they may be Encodable. It mirrors the
// order of once.Key's cases (runtime/key.go): time, KeyPart, [16]byte, TextMarshaler, kind.
func EncodableWithoutError(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface:
		return false
	}
	if isNamed(t, "time", "Time") || hasMethod(t, "OnceKey") {
		return true
	}
	switch u := t.Underlying().(type) {
	case *types.Array:
		b, ok := u.Elem().Underlying().(*types.Basic)
		return u.Len() == 16 && ok && b.Kind() == types.Uint8
	case *types.Basic:
		return !hasMethod(t, "MarshalText") && u.Info()&(types.IsInteger|types.IsString|types.IsBoolean) != 0
	}
	return false
}

// jsonProblem says why encoding/json cannot encode a value of type t, or "" when it can or
// when only the value can tell (an interface, a float that may be NaN). It follows
// encoding/json's rules: a type with a MarshalJSON or MarshalText method (on the value or
// the pointer) encodes itself; channels, functions, complex numbers and unsafe pointers are
// refused; a map's keys must be strings, integers or encoding.TextMarshalers; a struct
// encodes its exported fields (and those of embedded structs) not tagged json:"-".
func jsonProblem(t types.Type, q types.Qualifier, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	if marshalsItself(t) {
		return ""
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsComplex != 0:
			return "a complex number has no JSON form"
		case u.Kind() == types.UnsafePointer:
			return "an unsafe.Pointer has no JSON form"
		}
	case *types.Chan:
		return "a channel has no JSON form"
	case *types.Signature:
		return "a function has no JSON form"
	case *types.Pointer:
		return within("what it points to", jsonProblem(u.Elem(), q, seen))
	case *types.Slice:
		return within("its elements", jsonProblem(u.Elem(), q, seen))
	case *types.Array:
		return within("its elements", jsonProblem(u.Elem(), q, seen))
	case *types.Map:
		k := u.Key()
		if b, ok := k.Underlying().(*types.Basic); !(ok && b.Info()&(types.IsString|types.IsInteger) != 0) && !hasMethod(k, "MarshalText") && !hasMethod(types.NewPointer(k), "MarshalText") {
			return fmt.Sprintf("a map key of type %s is not a string, an integer or an encoding.TextMarshaler", types.TypeString(k, q))
		}
		return within("its values", jsonProblem(u.Elem(), q, seen))
	case *types.Struct:
		for i := range u.NumFields() {
			f := u.Field(i)
			tag, skip := structTagJSON(u.Tag(i))
			if skip {
				continue
			}
			if f.Embedded() {
				ft := f.Type()
				if p, ok := ft.Underlying().(*types.Pointer); ok {
					ft = p.Elem()
				}
				if _, isStruct := ft.Underlying().(*types.Struct); isStruct && tag == "" {
					if why := jsonProblem(ft, q, seen); why != "" {
						return why
					}
					continue
				}
			}
			if !f.Exported() {
				continue
			}
			if why := jsonProblem(f.Type(), q, seen); why != "" {
				return fmt.Sprintf("field %s: %s", f.Name(), why)
			}
		}
	}
	return ""
}

// within says that part of a type holds the problem why.
func within(part, why string) string {
	if why == "" {
		return ""
	}
	return part + ": " + why
}

// marshalsItself reports a type that implements json.Marshaler or encoding.TextMarshaler,
// through its value or its pointer.
func marshalsItself(t types.Type) bool {
	for _, m := range []string{"MarshalJSON", "MarshalText"} {
		if hasMethod(t, m) {
			return true
		}
		if _, isPtr := t.(*types.Pointer); !isPtr {
			if hasMethod(types.NewPointer(t), m) {
				return true
			}
		}
	}
	return false
}

// structTagJSON returns the name a struct tag's json key gives the field, and whether it
// leaves the field out (json:"-"; json:"-," names it "-").
func structTagJSON(tag string) (name string, skip bool) {
	v, _ := reflect.StructTag(tag).Lookup("json")
	if v == "-" {
		return "", true
	}
	name, _, _ = strings.Cut(v, ",")
	return name, false
}

// hasMethod reports whether t's method set has the method of KeyPart (OnceKey() string), of
// encoding.TextMarshaler (MarshalText() ([]byte, error)) or of json.Marshaler
// (MarshalJSON() ([]byte, error)) called name.
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
	case "MarshalText", "MarshalJSON":
		return sig.Results().Len() == 2 && isError(sig.Results().At(1).Type()) &&
			types.Identical(sig.Results().At(0).Type(), types.NewSlice(types.Typ[types.Byte]))
	}
	return false
}

// refusedCall names the callee of call when it reads the clock or a random source, or "".
func refusedCall(call *ast.CallExpr, info *types.Info) string {
	fn, ok := typeutil.Callee(info, call).(*types.Func)
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
	last := strings.ToLower(path[strings.LastIndex(path, "/")+1:])
	lower := strings.ToLower(path)
	for _, s := range []string{"uuid", "ulid", "ksuid", "xid", "nanoid", "shortid"} {
		if strings.Contains(last, s) || strings.Contains(lower, "/"+s) {
			return true
		}
	}
	return false
}

func isNamed(t types.Type, path, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == path && n.Obj().Name() == name
}

// isResult reports a named result of sig.
func isResult(sig *types.Signature, v *types.Var) bool {
	for i := range sig.Results().Len() {
		if sig.Results().At(i) == v {
			return true
		}
	}
	return false
}

func isContext(t types.Type) bool { return isNamed(t, "context", "Context") }

func isPgxTx(t types.Type) bool { return isNamed(t, PgxPath, "Tx") }

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}
