package once005

import (
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// textTypes are the database handles whose methods send the SQL text they are given,
// by package path and type name. An application's own interface that one of them
// implements (sqlc's DBTX) is read as that type.
var textTypes = map[string]bool{
	"database/sql.DB": true, "database/sql.Tx": true, "database/sql.Conn": true,
	"github.com/jmoiron/sqlx.DB": true, "github.com/jmoiron/sqlx.Tx": true, "github.com/jmoiron/sqlx.Conn": true,
	"github.com/jackc/pgx/v5.Conn": true, "github.com/jackc/pgx/v5.Tx": true,
	"github.com/jackc/pgx/v5/pgxpool.Pool": true, "github.com/jackc/pgx/v5/pgxpool.Conn": true, "github.com/jackc/pgx/v5/pgxpool.Tx": true,
	"github.com/jackc/pgx/v4.Conn": true, "github.com/jackc/pgx/v4.Tx": true,
	"github.com/jackc/pgx/v4/pgxpool.Pool": true, "github.com/jackc/pgx/v4/pgxpool.Conn": true, "github.com/jackc/pgx/v4/pgxpool.Tx": true,
	"github.com/uptrace/bun.DB": true, "github.com/uptrace/bun.Tx": true, "github.com/uptrace/bun.Conn": true, "github.com/uptrace/bun.IDB": true,
	"github.com/oncekit/once/runtime.DB": true,
}

// textMethods are their methods that send it. QueryRow and sqlx's Get report a
// missing row as an error.
var textMethods = map[string]bool{
	"Exec": true, "ExecContext": true, "Query": true, "QueryContext": true, "QueryRow": true, "QueryRowContext": true,
	"Get": true, "GetContext": true, "Select": true, "SelectContext": true, "Queryx": true, "QueryxContext": true,
	"QueryRowx": true, "QueryRowxContext": true, "NamedExec": true, "NamedExecContext": true, "MustExec": true,
	"MustExecContext": true, "NamedQuery": true, "NamedQueryContext": true,
}

// sent is one statement a call sends.
type sent struct {
	op     Op
	handle ssa.Value   // the database handle it goes through, if known
	dests  []ssa.Value // what a read fills: Scan(&n), First(&u)
	exists bool        // a bool result says whether a row exists (xorm's Get, an Exist)
	model  *types.Named
	row    ssa.Value   // the row an ORM inserts
	args   []ssa.Value // the arguments SQL text's placeholders stand for
}

// calleeOf returns the function or method a call calls, or for a call through an
// interface, the interface's method.
func calleeOf(c *ssa.CallCommon) *types.Func {
	if c.IsInvoke() {
		return c.Method
	}
	if f := c.StaticCallee(); f != nil {
		if o := f.Origin(); o != nil {
			f = o
		}
		fn, _ := f.Object().(*types.Func)
		return fn
	}
	return nil
}

// argsOf splits a call's operands into its receiver (nil for a function) and arguments.
func argsOf(c *ssa.CallCommon) (ssa.Value, []ssa.Value) {
	if c.IsInvoke() {
		return c.Value, c.Args
	}
	if fn := calleeOf(c); fn != nil && fn.Signature().Recv() != nil && len(c.Args) > 0 {
		return c.Args[0], c.Args[1:]
	}
	return nil, c.Args
}

// typeKey names a method's receiver type, "path.Type", and returns its named type.
func typeKey(fn *types.Func) (string, *types.Named) {
	recv := fn.Signature().Recv()
	if recv == nil {
		return "", nil
	}
	n := named(recv.Type())
	if n == nil || n.Obj().Pkg() == nil {
		return "", nil
	}
	return n.Obj().Pkg().Path() + "." + n.Obj().Name(), n
}

func named(t types.Type) *types.Named {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// read returns the statement a call sends, if it sends one the check reads.
func (r *reader) read(c *ssa.CallCommon) (sent, bool) {
	fn := calleeOf(c)
	if fn == nil {
		return sent{}, false
	}
	key, recvType := typeKey(fn)
	if recvType == nil {
		return sent{}, false
	}
	recv, args := argsOf(c)
	if !textTypes[key] && types.IsInterface(recvType) {
		key = r.implementedBy(recvType)
	}
	switch {
	case textTypes[key] && textMethods[fn.Name()]:
		for i, a := range args {
			if q, ok := str(a); ok {
				s := r.text(q, recv, strings.HasPrefix(fn.Name(), "QueryRow") || strings.HasPrefix(fn.Name(), "Get"))
				s.args, s.dests = spread(args[i+1:]), args[:i]
				return s, true
			}
		}
	}
	if lib, k := r.library(recvType, fn.Name()); lib != nil {
		if e, ok := lib.ends[k]; ok {
			return r.orm(lib, recvType, e, recv, args)
		}
	}
	return sent{}, false
}

// text reads SQL text sent through handle.
func (r *reader) text(sql string, handle ssa.Value, errAbsent bool) sent {
	st := sqlfacts.Parse(sql)
	s := sent{op: Op{Stmt: st, ErrAbsent: errAbsent && st.Kind != sqlfacts.Other && !st.OneRow}, handle: handle}
	s.exists = st.Exists
	return s
}

// implementedBy returns the key of a database handle type, among the packages the
// package imports, that implements iface: a call of iface's method is a call of its.
func (r *reader) implementedBy(iface *types.Named) string {
	if r.drivers == nil {
		r.drivers = map[string]types.Type{}
		seen := map[*types.Package]bool{}
		var visit func(p *types.Package)
		visit = func(p *types.Package) {
			if seen[p] {
				return
			}
			seen[p] = true
			for key := range textTypes {
				i := strings.LastIndexByte(key, '.')
				if key[:i] == p.Path() {
					if tn, ok := p.Scope().Lookup(key[i+1:]).(*types.TypeName); ok {
						r.drivers[key] = tn.Type()
					}
				}
			}
			for _, imp := range p.Imports() {
				visit(imp)
			}
		}
		visit(r.pass.Pkg)
	}
	it, _ := iface.Underlying().(*types.Interface)
	if it == nil || it.NumMethods() == 0 {
		return ""
	}
	for key, t := range r.drivers {
		if types.Implements(t, it) || !types.IsInterface(t) && types.Implements(types.NewPointer(t), it) {
			return key
		}
	}
	return ""
}

// unwrap strips the conversions a value goes through on its way into an argument.
func unwrap(v ssa.Value) ssa.Value {
	for {
		switch x := v.(type) {
		case *ssa.MakeInterface:
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		case *ssa.ChangeInterface:
			v = x.X
		case *ssa.Convert:
			v = x.X
		default:
			return v
		}
	}
}

// str returns the constant string a value is.
func str(v ssa.Value) (string, bool) {
	c, ok := unwrap(v).(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(c.Value), true
}

// elems returns the values a variadic argument's slice holds, in order.
func elems(v ssa.Value) []ssa.Value {
	s, ok := v.(*ssa.Slice)
	if !ok {
		return nil
	}
	arr, ok := s.X.(*ssa.Alloc)
	if !ok {
		return nil
	}
	var out []ssa.Value
	for _, ref := range *arr.Referrers() {
		if ia, ok := ref.(*ssa.IndexAddr); ok {
			for _, st := range *ia.Referrers() {
				if st, ok := st.(*ssa.Store); ok && st.Addr == ia {
					out = append(out, st.Val)
				}
			}
		}
	}
	return out
}

// spread returns a call's arguments with a variadic slice's values in its place.
func spread(args []ssa.Value) []ssa.Value {
	var out []ssa.Value
	for _, a := range args {
		if c, ok := a.(*ssa.Const); ok && c.Value == nil && isSlice(c.Type()) {
			continue // no variadic arguments
		}
		if e := elems(a); e != nil {
			out = append(out, e...)
		} else {
			out = append(out, a)
		}
	}
	return out
}

func isSlice(t types.Type) bool {
	_, ok := t.Underlying().(*types.Slice)
	return ok
}

// modelOf returns the struct type a model argument holds (&u, &users, User{}).
func modelOf(v ssa.Value) *types.Named {
	t := unwrap(v).Type()
	for {
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

// fieldsSet returns the columns a struct or map literal argument sets before the call
// being read (User{Email: e}, map[string]any{"email": e}), and whether it sets one to
// a constant.
func (r *reader) fieldsSet(v ssa.Value) (cols []string, consts bool) {
	x := unwrap(v)
	if load, ok := x.(*ssa.UnOp); ok {
		x = load.X
	}
	switch x := x.(type) {
	case *ssa.Alloc:
		for _, ref := range *x.Referrers() {
			switch ref := ref.(type) {
			case *ssa.FieldAddr:
				for _, use := range *ref.Referrers() {
					if st, ok := use.(*ssa.Store); ok && st.Addr == ref && (r.at == nil || before(st, r.at)) {
						cols = append(cols, fieldColumn(ref))
						consts = consts || isConst([]ssa.Value{st.Val})
					}
				}
			case *ssa.Store: // v := T{...} copies a literal made apart
				if ref.Addr == x && ref.Val != v {
					c, k := r.fieldsSet(ref.Val)
					cols, consts = append(cols, c...), consts || k
				}
			}
		}
	case *ssa.MakeMap:
		for _, ref := range *x.Referrers() {
			if mu, ok := ref.(*ssa.MapUpdate); ok {
				if k, ok := str(mu.Key); ok {
					cols = append(cols, strings.ToLower(k))
					consts = consts || isConst([]ssa.Value{mu.Value})
				}
			}
		}
	}
	return cols, consts
}

// link is one call of a chain of builder calls.
type link struct {
	name string
	args []ssa.Value
}

// chain returns the calls of a builder chain that end at recv, the nearest first:
// db.Where(...).Model(...) for recv, the Model call's value. Calls of methods whose
// receiver type same accepts are followed, through variables and branches.
func chain(recv ssa.Value, same func(*types.Named) bool) []link {
	var out []link
	seen := map[ssa.Value]bool{}
	var walk func(v ssa.Value)
	walk = func(v ssa.Value) {
		if seen[v] {
			return
		}
		seen[v] = true
		switch x := v.(type) {
		case *ssa.Call:
			fn := calleeOf(&x.Call)
			if fn == nil {
				return
			}
			if _, t := typeKey(fn); t != nil && same(t) {
				r, args := argsOf(&x.Call)
				out = append(out, link{fn.Name(), args})
				walk(r)
			}
		case *ssa.Phi:
			for _, e := range x.Edges {
				walk(e)
			}
		case *ssa.ChangeType, *ssa.MakeInterface:
			walk(*x.(ssa.Instruction).Operands(nil)[0])
		}
	}
	walk(recv)
	return out
}

// root returns the value a builder chain starts from: the handle it goes through.
func root(recv ssa.Value, same func(*types.Named) bool) ssa.Value {
	for {
		c, ok := recv.(*ssa.Call)
		if !ok {
			return recv
		}
		fn := calleeOf(&c.Call)
		if fn == nil {
			return recv
		}
		if _, t := typeKey(fn); t == nil || !same(t) {
			return recv
		}
		r, _ := argsOf(&c.Call)
		if r == nil {
			return recv
		}
		recv = r
	}
}
