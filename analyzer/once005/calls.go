package once005

import (
	"cmp"
	"go/types"
	"maps"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/model"
)

// sent is one statement a call sends.
type sent struct {
	op     Op
	handle ssa.Value   // the database handle it goes through, if known
	dests  []ssa.Value // what a read fills: Scan(&n), First(&u)
	exists bool        // a bool it returns says whether a row exists (xorm's Get, an Exist)
	model  *types.Named
	row    ssa.Value   // the row an ORM inserts
	args   []ssa.Value // the arguments SQL text's placeholders stand for
}

// calleeOf returns the function, or interface method, a call calls.
func calleeOf(c *ssa.CallCommon) *types.Func {
	if c.IsInvoke() {
		return c.Method
	}
	if f := c.StaticCallee(); f != nil {
		fn, _ := cmp.Or(f.Origin(), f).Object().(*types.Func)
		return fn
	}
	return nil
}

func argsOf(c *ssa.CallCommon) (ssa.Value, []ssa.Value) {
	if c.IsInvoke() {
		return c.Value, c.Args
	}
	if fn := calleeOf(c); fn != nil && fn.Signature().Recv() != nil && len(c.Args) > 0 {
		return c.Args[0], c.Args[1:]
	}
	return nil, c.Args
}

func recvType(fn *types.Func) *types.Named {
	if recv := fn.Signature().Recv(); recv != nil && named(recv.Type()) != nil && named(recv.Type()).Obj().Pkg() != nil {
		return named(recv.Type())
	}
	return nil
}

func named(t types.Type) *types.Named {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// read returns what a call of a library's end (or of an interface it implements) sends.
func (r *reader) read(c *ssa.CallCommon) (sent, bool) {
	fn := calleeOf(c)
	if fn == nil || recvType(fn) == nil {
		return sent{}, false
	}
	t := recvType(fn)
	if lib, _ := r.library(t, fn.Name()); lib == nil && types.IsInterface(t) {
		t = r.implementedBy(t)
	}
	recv, args := argsOf(c)
	if lib, key := r.library(t, fn.Name()); lib != nil {
		if _, ok := lib.ends[key]; ok {
			return r.orm(lib, t, key, recv, args)
		}
	}
	return sent{}, false
}

// implementations returns the methods of the package's own types that an interface call
// reaches.
func (r *reader) implementations(c *ssa.CallCommon, prog *ssa.Program) (out []*ssa.Function) {
	iface, _ := c.Value.Type().Underlying().(*types.Interface)
	if iface == nil {
		return nil
	}
	for _, m := range model.Implementers(r.pass.Fset, r.pass.Pkg, iface, c.Method) {
		if fn := prog.FuncValue(m); fn != nil && fn.Pkg != nil && fn.Pkg.Pkg == r.pass.Pkg {
			out = append(out, fn)
		}
	}
	return out
}

// implementedBy returns an imported database handle type implementing iface (sqlc's DBTX).
func (r *reader) implementedBy(iface *types.Named) *types.Named {
	if r.drivers == nil {
		r.drivers = []types.Type{}
		seen := map[*types.Package]bool{}
		var visit func(p *types.Package)
		visit = func(p *types.Package) {
			for _, key := range slices.Sorted(maps.Keys(libraries[0].types)) { // in one order: the first that implements wins
				if i := strings.LastIndexByte(key, '.'); key[:i] == p.Path() && p.Scope().Lookup(key[i+1:]) != nil {
					r.drivers = append(r.drivers, p.Scope().Lookup(key[i+1:]).Type())
				}
			}
			for _, imp := range p.Imports() {
				if !seen[imp] {
					seen[imp] = true
					visit(imp)
				}
			}
		}
		visit(r.pass.Pkg)
	}
	if it, _ := iface.Underlying().(*types.Interface); it != nil && it.NumMethods() > 0 {
		for _, t := range r.drivers {
			if types.Implements(t, it) || types.Implements(types.NewPointer(t), it) {
				return named(t)
			}
		}
	}
	return iface
}

// unwrap strips the conversions a value goes through on its way into an argument.
func unwrap(v ssa.Value) ssa.Value {
	for {
		switch v.(type) {
		case *ssa.MakeInterface, *ssa.ChangeType, *ssa.ChangeInterface, *ssa.Convert:
			v = *v.(ssa.Instruction).Operands(nil)[0] // their X, the one operand
		default:
			return v
		}
	}
}

func str(v ssa.Value) (string, bool) { return model.ConstString(unwrap(v)) }

// spread returns a call's arguments with a variadic slice's values in its place.
func spread(args []ssa.Value) []ssa.Value {
	var out []ssa.Value
	for _, a := range args {
		if _, isSlice := a.Type().Underlying().(*types.Slice); isSlice && isNil(a) {
			continue // no variadic arguments
		}
		var arr *ssa.Alloc
		if s, ok := a.(*ssa.Slice); ok {
			arr, _ = s.X.(*ssa.Alloc)
		}
		if arr == nil {
			out = append(out, a)
		} else {
			for _, ref := range model.Refs(arr) {
				if ia, ok := ref.(*ssa.IndexAddr); ok {
					for _, st := range model.Refs(ia) {
						if st, ok := st.(*ssa.Store); ok && st.Addr == ia {
							out = append(out, st.Val)
						}
					}
				}
			}
		}
	}
	return out
}

// modelOf returns the struct type a model argument holds (&u, &users, User{}).
func modelOf(v ssa.Value) *types.Named {
	for t := unwrap(v).Type(); ; {
		switch u := types.Unalias(t).(type) {
		case *types.Pointer:
			t = u.Elem()
		case *types.Slice:
			t = u.Elem()
		case *types.Named:
			if _, ok := u.Underlying().(*types.Struct); ok && u.Obj().Pkg() != nil {
				return u
			}
			return nil
		default:
			return nil
		}
	}
}

// fieldsSet returns the columns a literal sets before the call read, and if to a constant.
func (r *reader) fieldsSet(v ssa.Value) (cols []string, consts bool) {
	x := unwrap(v)
	if load, ok := x.(*ssa.UnOp); ok {
		x = load.X
	}
	for _, ref := range model.Refs(x) {
		switch ref := ref.(type) {
		case *ssa.FieldAddr:
			for _, use := range model.Refs(ref) {
				if st, ok := use.(*ssa.Store); ok && st.Addr == ref && (r.at == nil || before(st, r.at)) {
					cols, consts = append(cols, fieldColumn(ref)), consts || isConst(st.Val)
				}
			}
		case *ssa.Store: // v := T{...} copies a literal made apart
			if ref.Addr == x && ref.Val != v {
				c, k := r.fieldsSet(ref.Val)
				cols, consts = append(cols, c...), consts || k
			}
		case *ssa.MapUpdate:
			if k, ok := str(ref.Key); ok {
				cols, consts = append(cols, strings.ToLower(k)), consts || isConst(ref.Value)
			}
		}
	}
	return cols, consts
}

type link struct {
	name string
	args []ssa.Value
}

// chain returns the calls of types same accepts ending at recv, and the handle before.
func chain(recv ssa.Value, same func(*types.Named) bool) (links []link, root ssa.Value) {
	seen := map[ssa.Value]bool{}
	var walk func(v ssa.Value)
	walk = func(v ssa.Value) {
		if seen[v] {
			return
		}
		seen[v] = true
		if c, ok := v.(*ssa.Call); ok {
			if fn := calleeOf(&c.Call); fn != nil && recvType(fn) != nil && same(recvType(fn)) {
				r, args := argsOf(&c.Call)
				links = append(links, link{fn.Name(), args})
				walk(r)
				return
			}
		}
		if phi, ok := v.(*ssa.Phi); ok {
			for _, e := range phi.Edges {
				walk(e)
			}
		} else if root == nil {
			root = v
		}
	}
	walk(recv)
	return links, root
}
