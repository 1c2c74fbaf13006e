package once005

import (
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// FreshFact marks a function that makes a value no second call would make again: one
// drawn from the clock, a random source or an id generator (a UUID, a ULID, a
// snowflake), itself or through the functions it calls. Result: it returns such a
// value (a string, a number, a byte slice; not a struct). Fields: the struct fields it
// sets to one, on a value it makes or is given (Name in &Order{Name: "o_" + uuid()}).
//
// A primary key set from such a value differs between two calls, so it does not stop
// the second from inserting; a key set from the input does.
type FreshFact struct {
	Result bool
	Fields []string
}

// AFact marks FreshFact as a fact.
func (*FreshFact) AFact() {}

func (f *FreshFact) String() string {
	s := "fresh("
	if f.Result {
		s += "result"
	}
	if len(f.Fields) > 0 {
		if f.Result {
			s += ","
		}
		s += strings.Join(f.Fields, ",")
	}
	return s + ")"
}

// freshPackages are path elements of packages whose functions make new ids.
var freshPackages = map[string]bool{
	"uuid": true, "shortuuid": true, "ulid": true, "ksuid": true, "xid": true, "nanoid": true,
	"snowflake": true, "sonyflake": true, "shortid": true, "cuid": true, "cuid2": true,
}

// deterministicIDs are functions of those packages that read or derive an id rather than
// make a new one: the same input gives the same id.
var deterministicIDs = map[string]bool{
	"Parse": true, "MustParse": true, "ParseBytes": true, "ParseStrict": true, "FromString": true,
	"FromStringOrNil": true, "FromBytes": true, "FromBytesOrNil": true, "NewSHA1": true, "NewMD5": true,
	"NewV3": true, "NewV5": true, "NewHash": true, "Validate": true, "Must": true, "IsValid": true,
}

// freshSource reports a function that is itself a source of new values: time.Now, any
// function or method of math/rand, math/rand/v2 and crypto/rand, and the generators of
// an id package (uuid.New, ulid.Make, a snowflake node's Generate; not Parse or the
// name-based NewSHA1).
func freshSource(fn *types.Func) bool {
	pkg := fn.Pkg()
	if pkg == nil {
		return false
	}
	path := pkg.Path()
	switch path {
	case "time":
		return fn.Name() == "Now"
	case "math/rand", "math/rand/v2", "crypto/rand":
		return true
	}
	if !idPackage(path) || deterministicIDs[fn.Name()] {
		return false
	}
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
		// A method reads the id it is called on (String, Bytes), unless it makes one.
		n := fn.Name()
		return n == "Generate" || n == "Next" || n == "NextID" || strings.HasPrefix(n, "New")
	}
	return true
}

// idPackage reports a package path with an element that names an id generator
// (github.com/google/uuid, github.com/satori/go.uuid, github.com/matoous/go-nanoid/v2).
func idPackage(path string) bool {
	for _, el := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '.' || r == '-' || r == '_' }) {
		if freshPackages[strings.ToLower(el)] {
			return true
		}
	}
	return false
}

// freshAnalyzer computes the FreshFacts of every package, those ONCE005 checks and
// those they import.
var freshAnalyzer = &analysis.Analyzer{
	Name: "once005fresh",
	Doc:  "find the functions that make new values (ids, random names, the time), for ONCE005's primary keys",
	Run: func(pass *analysis.Pass) (any, error) {
		return &freshIndex{pass: pass, own: freshness(pass)}, nil
	},
	FactTypes:  []analysis.Fact{new(FreshFact)},
	ResultType: reflect.TypeFor[*freshIndex](),
}

// freshIndex answers for any function what is known of the new values it makes: the
// package's own, and the facts of the packages it imports.
type freshIndex struct {
	pass *analysis.Pass
	own  map[*types.Func]*FreshFact
}

func (x *freshIndex) of(fn *types.Func) *FreshFact { return lookupFresh(x.pass, x.own, fn) }

// freshness computes the package's FreshFacts and exports them; it returns them by
// function for the checks of the package.
//
// The standard library is not read: its sources of new values (time.Now, math/rand,
// crypto/rand) are named, and a key made through one of its other functions is made
// from an argument the call site shows. Facts go only on exported functions and methods,
// the only ones another package can call; the rest serve the package's own checks.
func freshness(pass *analysis.Pass) map[*types.Func]*FreshFact {
	own := map[*types.Func]*FreshFact{}
	if standard(pass) {
		return own
	}
	var decls []*ast.FuncDecl
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				decls = append(decls, fd)
			}
		}
	}
	// Functions of the package call each other: go round until nothing changes.
	for range 8 {
		changed := false
		for _, fd := range decls {
			obj, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			f := freshOf(pass, own, fd)
			old := own[obj]
			if f.Result || len(f.Fields) > 0 {
				if old == nil || old.Result != f.Result || !slices.Equal(old.Fields, f.Fields) {
					own[obj] = f
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	for obj, f := range own {
		if obj.Exported() {
			pass.ExportObjectFact(obj, f)
		}
	}
	return own
}

// standard reports a package of the standard library: its files are under GOROOT.
func standard(pass *analysis.Pass) bool {
	if len(pass.Files) == 0 {
		return true
	}
	name := pass.Fset.File(pass.Files[0].Pos()).Name()
	root := filepath.Join(build.Default.GOROOT, "src") + string(filepath.Separator)
	return build.Default.GOROOT != "" && strings.HasPrefix(name, root)
}

// freshOf computes one function's FreshFact from what the package knows so far.
func freshOf(pass *analysis.Pass, own map[*types.Func]*FreshFact, fd *ast.FuncDecl) *FreshFact {
	fv := newFreshVals(pass.TypesInfo, func(fn *types.Func) *FreshFact { return lookupFresh(pass, own, fn) }, false)
	fv.scan(fd.Body, token.NoPos)
	out := &FreshFact{}
	inputs, returned := flows(pass.TypesInfo, fd)
	fields := map[string]bool{}
	for k := range fv.fields {
		if inputs[k.v] {
			fields[k.field] = true // set on a value the caller sees
		}
	}
	sig := pass.TypesInfo.Defs[fd.Name].Type().(*types.Signature)
	scalar := false
	for i := range sig.Results().Len() {
		scalar = scalar || scalarType(sig.Results().At(i).Type())
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if !scalar {
				return true
			}
			for _, r := range n.Results {
				out.Result = out.Result || fv.fresh(r)
			}
			if len(n.Results) == 0 {
				for i := range sig.Results().Len() {
					out.Result = out.Result || fv.vars[sig.Results().At(i)]
				}
			}
		case *ast.CompositeLit:
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok && isStructLit(pass.TypesInfo, n) && fv.fresh(kv.Value) {
						fields[id.Name] = true
					}
				}
			}
		case *ast.CallExpr:
			// What a function it calls sets on a value this one was given or gives
			// back, it sets.
			if callee, ok := typeutil.Callee(pass.TypesInfo, n).(*types.Func); ok && (handsOn(pass.TypesInfo, n, inputs) || slices.Contains(returned, n)) {
				if f := lookupFresh(pass, own, callee); f != nil {
					for _, name := range f.Fields {
						fields[name] = true
					}
				}
			}
		}
		return true
	})
	for name := range fields {
		out.Fields = append(out.Fields, name)
	}
	slices.Sort(out.Fields)
	return out
}

// flows returns the variables whose fields a call may set for fd's caller to see: its
// parameters, its receiver and the variables it returns; and the calls whose results it
// returns, directly or through a variable.
func flows(info *types.Info, fd *ast.FuncDecl) (inputs map[*types.Var]bool, returned []*ast.CallExpr) {
	inputs = map[*types.Var]bool{}
	for _, fl := range []*ast.FieldList{fd.Recv, fd.Type.Params, fd.Type.Results} {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, name := range f.Names {
				if v, ok := info.Defs[name].(*types.Var); ok {
					inputs[v] = true
				}
			}
		}
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			for _, r := range n.Results {
				if v := rootVar(info, stripAddr(r)); v != nil {
					inputs[v] = true
				}
				if c, ok := stripAddr(r).(*ast.CallExpr); ok {
					returned = append(returned, c)
				}
			}
		}
		return true
	})
	// A variable returned that a call made (u := newUser(...); return u) carries what
	// the call set: a second pass, once every returned variable is known.
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			if len(n.Rhs) != 1 {
				return true
			}
			c, ok := ast.Unparen(n.Rhs[0]).(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, lhs := range n.Lhs {
				if v := rootVar(info, lhs); v != nil && inputs[v] {
					returned = append(returned, c)
				}
			}
		}
		return true
	})
	return inputs, returned
}

// handsOn reports a call given one of vars: as an argument (by address or not) or as
// the receiver of a method.
func handsOn(info *types.Info, call *ast.CallExpr, vars map[*types.Var]bool) bool {
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if s, ok := info.Selections[sel]; ok && s.Kind() == types.MethodVal {
			if v := rootVar(info, sel.X); v != nil && vars[v] {
				return true
			}
		}
	}
	for _, arg := range call.Args {
		if v := rootVar(info, stripAddr(arg)); v != nil && vars[v] {
			return true
		}
	}
	return false
}

func isStructLit(info *types.Info, lit *ast.CompositeLit) bool {
	t := info.TypeOf(lit)
	if t == nil {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	_, ok := t.Underlying().(*types.Struct)
	return ok
}

// scalarType reports a type a key can be made of: a basic type, a slice or array (a
// byte slice, a UUID's bytes), or a named one of those; not a struct or a pointer.
func scalarType(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Kind() != types.UntypedNil
	case *types.Slice, *types.Array:
		return true
	}
	return false
}

// lookupFresh returns what is known of fn: the package's own result so far, or the fact
// of another package's function.
func lookupFresh(pass *analysis.Pass, own map[*types.Func]*FreshFact, fn *types.Func) *FreshFact {
	fn = fn.Origin()
	if f, ok := own[fn]; ok {
		return f
	}
	if fn.Pkg() == nil || fn.Pkg() == pass.Pkg {
		return nil
	}
	var f FreshFact
	if pass.ImportObjectFact(fn, &f) {
		return &f
	}
	return nil
}

// fieldKey is one field of one variable (user.Name).
type fieldKey struct {
	v     *types.Var
	field string
}

// freshVals follows new values through a function's local variables: a variable
// assigned one holds one (id := uuid.NewString(); name := "sub_" + id), and a field
// assigned one holds one (user.Name = randomName()) without making the rest of the
// variable new.
type freshVals struct {
	info   *types.Info
	facts  func(*types.Func) *FreshFact
	vars   map[types.Object]bool
	fields map[fieldKey]bool
	// dynamic: a call of a function value (a func-typed parameter or field) counts as
	// new, for the body it runs is not known. Facts leave it out, or every function
	// that takes a callback would make new values.
	dynamic bool
}

func newFreshVals(info *types.Info, facts func(*types.Func) *FreshFact, dynamic bool) *freshVals {
	return &freshVals{info: info, facts: facts, vars: map[types.Object]bool{}, fields: map[fieldKey]bool{}, dynamic: dynamic}
}

// scan marks what the assignments in body make new, going round for loops; before, when
// valid, bounds the statements read to those that start before it.
func (fv *freshVals) scan(body ast.Node, before token.Pos) {
	for range 3 {
		ast.Inspect(body, func(n ast.Node) bool {
			if n == nil || (before.IsValid() && n.Pos() >= before) {
				return false
			}
			switch n := n.(type) {
			case *ast.AssignStmt:
				if len(n.Rhs) == 1 {
					fv.made(n.Lhs[0], n.Rhs[0])
				}
				if len(n.Lhs) == len(n.Rhs) {
					for i, lhs := range n.Lhs {
						if fv.literal(lhs, n.Rhs[i]) {
							continue
						}
						if fv.fresh(n.Rhs[i]) {
							fv.mark(lhs)
						}
					}
				} else if len(n.Rhs) == 1 && fv.fresh(n.Rhs[0]) {
					for _, lhs := range n.Lhs {
						fv.mark(lhs)
					}
				}
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if len(n.Values) == len(n.Names) && fv.literal(name, n.Values[i]) {
						continue
					}
					if (len(n.Values) == len(n.Names) && fv.fresh(n.Values[i])) || (len(n.Values) == 1 && len(n.Names) > 1 && fv.fresh(n.Values[0])) {
						fv.mark(name)
					}
				}
			}
			return true
		})
	}
}

// literal reads v := &T{F: e} (or T{...}): the fields given new values hold them, the
// variable as a whole does not. It reports whether rhs was a struct literal.
func (fv *freshVals) literal(lhs, rhs ast.Expr) bool {
	lit, ok := stripAddr(rhs).(*ast.CompositeLit)
	if !ok || !isStructLit(fv.info, lit) {
		return false
	}
	v := rootVar(fv.info, lhs)
	if id, ok := ast.Unparen(lhs).(*ast.Ident); !ok || v == nil || fv.info.ObjectOf(id) != v {
		return true // a literal stored into a field or an element: not followed
	}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && fv.fresh(kv.Value) {
				fv.fields[fieldKey{v, id.Name}] = true
			}
		}
	}
	return true
}

// made reads v := newOrder(...): the fields the function sets to new values hold them
// in v (v.Name, when newOrder names the order by a UUID).
func (fv *freshVals) made(lhs, rhs ast.Expr) {
	call, ok := ast.Unparen(rhs).(*ast.CallExpr)
	if !ok {
		return
	}
	callee, ok := typeutil.Callee(fv.info, call).(*types.Func)
	if !ok {
		return
	}
	f := fv.facts(callee)
	id, ok := ast.Unparen(lhs).(*ast.Ident)
	if f == nil || !ok {
		return
	}
	if v, ok := fv.info.ObjectOf(id).(*types.Var); ok {
		for _, name := range f.Fields {
			fv.fields[fieldKey{v, name}] = true
		}
	}
}

// mark records a new value assigned to lhs: the field for x.f, the variable for x or
// x[i].
func (fv *freshVals) mark(lhs ast.Expr) {
	if sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr); ok {
		if s, ok := fv.info.Selections[sel]; ok && s.Kind() == types.FieldVal {
			if v := rootVar(fv.info, sel.X); v != nil {
				fv.fields[fieldKey{v, sel.Sel.Name}] = true
			}
			return
		}
	}
	if v := rootVar(fv.info, lhs); v != nil {
		fv.vars[v] = true
	}
}

// fresh reports whether e holds a new value: a call of a source or of a function whose
// fact says it returns one, or a variable or field that holds one.
func (fv *freshVals) fresh(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CompositeLit:
			// A struct made with a new field is not itself a new value: its fields
			// are followed one by one (see literal).
			return !isStructLit(fv.info, n)
		case *ast.CallExpr:
			if tv, ok := fv.info.Types[n.Fun]; ok && tv.IsType() {
				return true // a conversion
			}
			switch callee := typeutil.Callee(fv.info, n).(type) {
			case *types.Func:
				if freshSource(callee) {
					found = true
				} else if f := fv.facts(callee); f != nil && f.Result {
					found = true
				}
			case *types.Var:
				found = fv.dynamic // a func value: its body is not known here
			}
		case *ast.SelectorExpr:
			if s, ok := fv.info.Selections[n]; ok && s.Kind() == types.FieldVal {
				if v := rootVar(fv.info, n.X); v != nil && fv.fields[fieldKey{v, n.Sel.Name}] {
					found = true
				}
			}
		case *ast.Ident:
			if obj := fv.info.Uses[n]; obj != nil && fv.vars[obj] {
				found = true
			}
		}
		return true
	})
	return found
}
