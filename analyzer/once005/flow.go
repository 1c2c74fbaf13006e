package once005

import (
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// taint follows what one read returned through a function's SSA: the values computed
// from it, the variables and fields it is stored in or scanned into, up to the
// branches that test it and the results that return it.
type taint struct {
	vals      map[ssa.Value]bool
	fields    map[fieldKey]bool
	work      []ssa.Value
	ifs       []*ssa.If
	results   map[int]bool
	errAbsent bool // an error from the read means "no row"
	exists    bool // a bool from the read means "a row exists"
	count     bool // a number from the read counts rows
	sum       bool // a number from the read is an amount, not a count
}

// fieldKey is one field of the struct an address points to: a value stored into
// m.Seq taints m.Seq, not the rest of m.
type fieldKey struct {
	base  ssa.Value
	field int
}

// follow taints what call (a read) returns, and what it fills (dests).
func follow(call ssa.CallInstruction, s sent) *taint {
	t := &taint{vals: map[ssa.Value]bool{}, fields: map[fieldKey]bool{}, results: map[int]bool{},
		errAbsent: s.op.ErrAbsent, exists: s.exists, count: s.op.Count, sum: s.op.Sum}
	if v, ok := call.(*ssa.Call); ok {
		t.add(v)
	}
	for _, d := range s.dests {
		t.pointee(d, true)
	}
	for len(t.work) > 0 {
		v := t.work[len(t.work)-1]
		t.work = t.work[:len(t.work)-1]
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, instr := range *refs {
			switch x := instr.(type) {
			case *ssa.If:
				t.ifs = append(t.ifs, x)
			case *ssa.Return:
				for i, r := range x.Results {
					if r == v {
						t.results[i] = true
					}
				}
			case *ssa.Store:
				if x.Val == v {
					t.store(x.Addr)
				}
			case ssa.CallInstruction:
				if c, ok := x.(*ssa.Call); ok {
					t.add(c)
				}
				for _, a := range x.Common().Args {
					t.pointee(a, false)
				}
			case *ssa.MapUpdate, *ssa.Send, *ssa.DebugRef:
			case ssa.Value:
				t.add(x)
			}
		}
	}
	return t
}

func (t *taint) add(v ssa.Value) {
	if v != nil && !t.vals[v] {
		t.vals[v] = true
		t.work = append(t.work, v)
	}
}

// store taints an address a tainted value is stored into: one field of a struct, or
// the whole of a variable.
func (t *taint) store(addr ssa.Value) {
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		key := fieldKey{a.X, a.Field}
		if t.fields[key] {
			return
		}
		t.fields[key] = true
		for _, ref := range *a.X.Referrers() {
			if fa, ok := ref.(*ssa.FieldAddr); ok && fa.Field == a.Field {
				t.add(fa)
			}
		}
	case *ssa.IndexAddr:
		t.add(a.X)
	default:
		t.add(a)
	}
}

// pointee taints what a pointer argument points to, when the call fills it: a read's
// destinations (any), or a local variable or field handed to a call that is given a
// tainted value (rows.Scan(&id), json.Unmarshal(b, &v)). A database handle passed
// along is not filled.
func (t *taint) pointee(a ssa.Value, any bool) {
	a = unwrap(a)
	if e := elems(a); e != nil {
		for _, v := range e {
			t.pointee(v, any)
		}
		return
	}
	switch x := a.(type) {
	case *ssa.FieldAddr: // Scan(&u.ID) fills the row u
		t.add(x)
		t.add(x.X)
	case *ssa.Alloc, *ssa.IndexAddr:
		t.add(a)
	default:
		if _, ok := a.Type().Underlying().(*types.Pointer); ok && any {
			t.add(a)
		}
	}
}

// class says what a branch on a read's value tests.
type class uint8

const (
	none    class = iota
	neutral       // whether the read failed
	limit         // a count or an amount against a limit
	exists        // whether a row was found
	other         // another test of what was read (a state, a flag)
)

// classify says what cond tests of the read, and which way: found is +1 when cond
// holds where a row was found, -1 where none was, 0 when it is not known.
func (t *taint) classify(cond ssa.Value) (c class, found int) {
	switch x := cond.(type) {
	case *ssa.UnOp:
		if x.Op == token.NOT {
			c, found = t.classify(x.X)
			return c, -found
		}
	case *ssa.BinOp:
		a, b, op := x.X, x.Y, x.Op
		if !t.vals[a] && !t.vals[b] {
			return none, 0
		}
		if t.vals[b] && !t.vals[a] {
			a, b, op = b, a, mirror[op]
		}
		if t.vals[b] {
			if numeric(a.Type()) {
				return limit, 0
			}
			return other, 0
		}
		if isNil(b) {
			if types.Identical(a.Type(), errorType) {
				if !t.errAbsent {
					return neutral, 0
				}
				return exists, sign(op == token.EQL)
			}
			return exists, sign(op == token.NEQ)
		}
		if !numeric(a.Type()) {
			return other, 0
		}
		n, ok := intConst(b)
		if !ok || t.sum {
			return limit, 0
		}
		if !t.count && isField(a) {
			return other, 0 // a row's value against a constant: a state, not a count
		}
		// How many rows the comparison lets there be before it says "found": a limit of
		// one row asks whether one exists; more is a cap.
		switch {
		case op == token.EQL || op == token.NEQ:
			if n != 0 {
				return other, 0
			}
			return exists, sign(op == token.NEQ)
		case (op == token.GEQ || op == token.LSS) && n <= 1, (op == token.GTR || op == token.LEQ) && n <= 0:
			return exists, sign(op == token.GEQ || op == token.GTR)
		}
		return limit, 0
	case *ssa.Call:
		if t.vals[x] {
			break // a bool the read returned: below
		}
		tainted := false
		for _, a := range x.Call.Args {
			tainted = tainted || t.vals[a]
		}
		if x.Call.IsInvoke() {
			tainted = tainted || t.vals[x.Call.Value]
		}
		if !tainted {
			return none, 0
		}
		fn := calleeOf(&x.Call)
		switch {
		case fn != nil && fn.Name() == "Next" && rowsTypes[key(fn)]:
			return exists, 1 // rows.Next(): a row came back
		case fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "errors" || anyError(x.Call.Args, t):
			return exists, -1 // errors.Is(err, sql.ErrNoRows), ent.IsNotFound(err)
		}
		return other, 0
	}
	if t.vals[cond] {
		if t.exists {
			return exists, 1
		}
		return other, 0
	}
	return none, 0
}

// handlesAbsent reports whether a branch tells the read's "no row" error from others
// (errors.Is(err, sql.ErrNoRows), err == pgx.ErrNoRows): the error a function returns
// past it means a failure, not an absent row.
func (t *taint) handlesAbsent() bool {
	for _, ifs := range t.ifs {
		cond := ifs.Cond
		for {
			if u, ok := cond.(*ssa.UnOp); ok && u.Op == token.NOT {
				cond = u.X
				continue
			}
			break
		}
		switch x := cond.(type) {
		case *ssa.Call:
			if anyError(x.Call.Args, t) {
				return true
			}
		case *ssa.BinOp:
			if types.Identical(x.X.Type(), errorType) && !isNil(x.X) && !isNil(x.Y) {
				return true
			}
		}
	}
	return false
}

// rowsTypes are the drivers' result sets, whose Next says a row came back.
var rowsTypes = map[string]bool{"database/sql.Rows": true, "github.com/jmoiron/sqlx.Rows": true,
	"github.com/jackc/pgx/v5.Rows": true, "github.com/jackc/pgx/v4.Rows": true}

func key(fn *types.Func) string {
	k, _ := typeKey(fn)
	return k
}

var (
	errorType = types.Universe.Lookup("error").Type()
	mirror    = map[token.Token]token.Token{token.LSS: token.GTR, token.GTR: token.LSS, token.LEQ: token.GEQ, token.GEQ: token.LEQ, token.EQL: token.EQL, token.NEQ: token.NEQ}
)

func sign(b bool) int {
	if b {
		return 1
	}
	return -1
}

func anyError(args []ssa.Value, t *taint) bool {
	for _, a := range args {
		if t.vals[a] && types.Identical(a.Type(), errorType) {
			return true
		}
	}
	return false
}

func numeric(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsNumeric != 0
}

// isField reports a value read from a struct's field.
func isField(v ssa.Value) bool {
	switch x := v.(type) {
	case *ssa.Field:
		return true
	case *ssa.UnOp:
		_, ok := x.X.(*ssa.FieldAddr)
		return ok && x.Op == token.MUL
	}
	return false
}

func isNil(v ssa.Value) bool {
	c, ok := v.(*ssa.Const)
	return ok && c.Value == nil
}

func intConst(v ssa.Value) (int64, bool) {
	c, ok := v.(*ssa.Const)
	if !ok || c.Value == nil {
		return 0, false
	}
	n, exact := constant.Int64Val(constant.ToInt(c.Value))
	return n, exact
}

// reach reports whether block to can be reached from from, not through the blocks not.
func reach(from, to *ssa.BasicBlock, not ...*ssa.BasicBlock) bool {
	seen := map[*ssa.BasicBlock]bool{}
	for _, b := range not {
		seen[b] = true
	}
	stack := []*ssa.BasicBlock{from}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if b == to {
			return true
		}
		if !seen[b] {
			seen[b] = true
			stack = append(stack, b.Succs...)
		}
	}
	return false
}

// decides reports whether a branch on the read decides whether the call in block at
// runs: one way leads to it, the other does not, unless by coming back to the branch
// or the read (the next turn of a loop, which reads again). A test in a loop that is
// over before the call, whose both ways reach it, decides nothing, nor does a branch
// that comes back to itself without reading again (for rows.Next() iterates). accept
// says which branches count. For an insert, a branch that knows which way means
// "found" must lead to it where nothing was found, and the read decides nothing when a
// branch shows the insert runs only where a row was found (a token issued after its
// refresh token was read): it follows from that row, it makes no absent one. A claim
// (an update of the row read) is decided either way.
func (t *taint) decides(read, at *ssa.BasicBlock, claim bool, accept func(class, *ssa.If) bool) *ssa.If {
	var decided *ssa.If
	for _, ifs := range t.ifs {
		b := ifs.Block()
		if b == at || len(b.Succs) != 2 || b != read && (!reach(read, b) || reach(b.Succs[0], b, read) || reach(b.Succs[1], b, read)) {
			continue // a branch before the read, or a loop over what it returned
		}
		c, found := t.classify(ifs.Cond)
		if claim {
			found = 0
		}
		onTrue, onFalse := reach(b.Succs[0], at, b, read), reach(b.Succs[1], at, b, read)
		if onTrue == onFalse {
			continue
		}
		if c == exists && found != 0 && onTrue == (found > 0) && !accept(limit, ifs) {
			return nil // only where a row was found
		}
		if decided == nil && accept(c, ifs) && (found == 0 || onTrue == (found < 0)) {
			decided = ifs
		}
	}
	return decided
}

// tested returns the columns whose values cond tests: a field of a row (its column), or
// a variable a read scanned into (the column selected at its place).
func tested(cond ssa.Value, selected []string, depth int) []string {
	if depth > 6 {
		return nil
	}
	switch x := cond.(type) {
	case *ssa.Field:
		s := x.X.Type().Underlying().(*types.Struct)
		return []string{sqlfacts.Column(s.Field(x.Field).Name(), s.Tag(x.Field))}
	case *ssa.UnOp:
		switch a := x.X.(type) {
		case *ssa.FieldAddr:
			return []string{fieldColumn(a)}
		case *ssa.Alloc:
			if i := scanPlace(a); i >= 0 && i < len(selected) {
				return selected[i : i+1]
			}
		}
	}
	var cols []string
	if instr, ok := cond.(ssa.Instruction); ok {
		for _, op := range instr.Operands(nil) {
			if *op != nil {
				cols = append(cols, tested(*op, selected, depth+1)...)
			}
		}
	}
	return cols
}

// scanPlace returns the place of a variable among a Scan's destinations, or -1.
func scanPlace(a *ssa.Alloc) int {
	for _, ref := range *a.Referrers() {
		if mi, ok := ref.(*ssa.MakeInterface); ok {
			for _, use := range *mi.Referrers() {
				if st, ok := use.(*ssa.Store); ok {
					if ia, ok := st.Addr.(*ssa.IndexAddr); ok {
						if n, ok := intConst(ia.Index); ok {
							return int(n)
						}
					}
				}
			}
		}
	}
	return -1
}

// controlled reports whether a return is decided by a branch on the read: a result
// computed from what the read found (return false, nil where it found nothing) tells
// the caller as much as the value itself.
func (t *taint) controlled(ret *ssa.Return) bool {
	for _, ifs := range t.ifs {
		if c, _ := t.classify(ifs.Cond); c == none || c == neutral {
			continue
		}
		b := ifs.Block()
		if len(b.Succs) == 2 && reach(b.Succs[0], ret.Block(), b) != reach(b.Succs[1], ret.Block(), b) {
			return true
		}
	}
	return false
}
