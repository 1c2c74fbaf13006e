package model

import (
	"go/token"
	"go/types"
	"iter"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/catalog"
)

// BuildSSA builds the SSA form of the pass's package, as the buildssa pass does, but only
// when the caller decides the package needs it: as a requirement, buildssa would build SSA
// for every dependency under go vet.
func BuildSSA(pass *analysis.Pass) *ssa.Package {
	prog := ssa.NewProgram(pass.Fset, ssa.BuilderMode(0))
	for _, p := range pass.Pkg.Imports() {
		prog.CreatePackage(p, nil, nil, true)
	}
	pkg := prog.CreatePackage(pass.Pkg, pass.Files, pass.TypesInfo, false)
	pkg.Build()
	return pkg
}

// FuncName is a function's full name as the catalogue and the guard table write it: its
// generic origin, without type parameters.
func FuncName(fn *types.Func) string { return stripTypeArgs(fn.Origin().FullName()) }

// stripTypeArgs drops bracketed type arguments and parameters: Job[T] becomes Job.
func stripTypeArgs(s string) string {
	if !strings.Contains(s, "[") {
		return s
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Display names a function for messages, by its package's name: notify.Send,
// (*mailer.Client).Send.
func Display(fn *types.Func) string {
	fn = fn.Origin()
	q := func(p *types.Package) string { return p.Name() }
	if recv := fn.Signature().Recv(); recv != nil {
		return "(" + stripTypeArgs(types.TypeString(recv.Type(), q)) + ")." + fn.Name()
	}
	if fn.Pkg() == nil {
		return fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}

// SignatureString writes a function type as the catalogue's roots name it: parameter and
// result types only, packages by path, type arguments left out, major versions dropped.
func SignatureString(sig *types.Signature) string {
	strip := func(t *types.Tuple) *types.Tuple {
		vars := make([]*types.Var, t.Len())
		for i := range vars {
			vars[i] = types.NewParam(0, nil, "", t.At(i).Type())
		}
		return types.NewTuple(vars...)
	}
	s := types.NewSignatureType(nil, nil, nil, strip(sig.Params()), strip(sig.Results()), sig.Variadic())
	return catalog.Normalize(stripTypeArgs(types.TypeString(s, nil)))
}

// methodKey identifies a method of a method set: its name and signature.
func methodKey(fn *types.Func) string { return fn.Name() + SignatureString(fn.Signature()) }

// typeName is the full name of a named type, without type arguments.
func typeName(t types.Type) string {
	if n, ok := types.Unalias(derefNamed(t)).(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// calleeFunc returns the function a call reaches statically, or the abstract method an
// interface call names, and whether it is an interface call.
func calleeFunc(c *ssa.CallCommon) (*types.Func, bool) {
	if c.IsInvoke() {
		return c.Method, true
	}
	v := c.Value
	if mc, ok := v.(*ssa.MakeClosure); ok {
		v = mc.Fn // a bound method value (x.M) called at once
	}
	if f, ok := v.(*ssa.Function); ok {
		obj, _ := f.Object().(*types.Func)
		return obj, false
	}
	return nil, false
}

// ArgAt returns the value given for parameter i of the callee (receiver first for a
// method), or nil.
func ArgAt(c *ssa.CallCommon, i int) ssa.Value {
	if c.IsInvoke() {
		if i == 0 {
			return c.Value
		}
		i--
	}
	if mc, ok := c.Value.(*ssa.MakeClosure); ok && isBound(mc) {
		if i == 0 {
			return mc.Bindings[0]
		}
		i--
	}
	if i < 0 || i >= len(c.Args) {
		return nil
	}
	return c.Args[i]
}

// sigArg returns the argument given for the callee's declared parameter i (the receiver
// not counted), as the catalogue counts them.
func sigArg(c *ssa.CallCommon, fn *types.Func, i int) ssa.Value {
	if fn != nil && fn.Signature().Recv() != nil {
		i++
	}
	return ArgAt(c, i)
}

// isBound reports whether a closure is a bound method value (x.M), whose one binding is
// the receiver.
func isBound(mc *ssa.MakeClosure) bool {
	f, ok := mc.Fn.(*ssa.Function)
	if !ok || len(mc.Bindings) != 1 {
		return false
	}
	obj, ok := f.Object().(*types.Func)
	return ok && obj.Signature().Recv() != nil
}

// paramOf returns the parameter v is, seen through the heap cell a parameter captured by
// a closure lives in (t0 = new T (p); *t0 = p; ... *t0), or nil.
func paramOf(v ssa.Value) *ssa.Parameter {
	if u, ok := v.(*ssa.UnOp); ok && u.Op == token.MUL {
		if al, ok := u.X.(*ssa.Alloc); ok && al.Heap {
			var p *ssa.Parameter
			for _, st := range storesTo(al) {
				q, ok := st.Val.(*ssa.Parameter)
				if !ok || p != nil && q != p {
					return nil
				}
				p = q
			}
			return p
		}
	}
	p, _ := v.(*ssa.Parameter)
	return p
}

// fieldOf returns the struct field a field address points at.
func fieldOf(fa *ssa.FieldAddr) *types.Var {
	return fa.X.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct).Field(fa.Field)
}

// instrs yields the instructions of type T in the functions' blocks, in order.
func instrs[T ssa.Instruction](fns ...*ssa.Function) iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, f := range fns {
			for _, b := range f.Blocks {
				for _, ins := range b.Instrs {
					if x, ok := ins.(T); ok && !yield(x) {
						return
					}
				}
			}
		}
	}
}

// Refs returns v's referrers: none for nil or a value that keeps no list (a global, a
// function).
func Refs(v ssa.Value) []ssa.Instruction {
	if v != nil && v.Referrers() != nil {
		return *v.Referrers()
	}
	return nil
}

// promoted names a method called through types that embed its receiver, as a caller may
// hold it, from the innermost embedding type outward: client.Send on a messaging.Client
// embedding *fcmClient calls (*fcmClient).Send, which a catalogue names
// (messaging.Client).Send; an app's own type embedding the client comes after. Each entry
// is the full name and the name for a message. It returns nothing for any other call.
func promoted(c *ssa.CallCommon, fn *types.Func) [][2]string {
	if c.IsInvoke() || fn.Signature().Recv() == nil || len(c.Args) == 0 {
		return nil
	}
	var out [][2]string
	for v := c.Args[0]; ; {
		var n *types.Named
		switch x := v.(type) {
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return out
			}
			v = x.X
			continue
		case *ssa.FieldAddr:
			if p, ok := x.X.Type().Underlying().(*types.Pointer); ok {
				n, v = embeddedIn(p.Elem(), x.Field), x.X
			}
		case *ssa.Field:
			n, v = embeddedIn(x.X.Type(), x.Field), x.X
		}
		if n == nil {
			return out
		}
		out = append(out, [2]string{"(" + n.Obj().Pkg().Path() + "." + n.Obj().Name() + ")." + fn.Name(), "(" + n.Obj().Pkg().Name() + "." + n.Obj().Name() + ")." + fn.Name()})
	}
}

// embeddedIn returns the named struct type t when its field i is embedded, else nil.
func embeddedIn(t types.Type, i int) *types.Named {
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		if st, ok := n.Underlying().(*types.Struct); ok && i < st.NumFields() && st.Field(i).Embedded() {
			return n
		}
	}
	return nil
}
