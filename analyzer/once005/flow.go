package once005

import (
	"cmp"
	"go/constant"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/model"
	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// taint follows what a read returned, to the branches testing it and the results.
type taint struct {
	vals    map[ssa.Value]bool
	work    []ssa.Value
	ifs     []*ssa.If
	results map[int]bool
	// an error means "no row"; a bool, "a row exists"; a number counts rows; or sums
	errAbsent, exists, count, sum bool
	// flag holds the flags a branch on what was read sets: 1 where true means a row was
	// found, -1 where it means none was, 0 for another property of the row
	flag map[ssa.Value]int
}

// follow taints what call (a read) returns, and what it fills.
func follow(call ssa.CallInstruction, s sent) *taint {
	t := &taint{vals: map[ssa.Value]bool{}, results: map[int]bool{}, flag: map[ssa.Value]int{},
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
		for _, instr := range model.Refs(v) {
			switch x := instr.(type) {
			case *ssa.If:
				t.ifs = append(t.ifs, x)
				t.flags(x)
			case *ssa.Return:
				for i, r := range x.Results {
					t.results[i] = t.results[i] || r == v
				}
			case *ssa.Store:
				if x.Val == v {
					t.store(x.Addr)
				}
			case ssa.CallInstruction: // rows.Scan(&id) fills id; a call of a read value returns one
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

// flags taints the flags a branch on what was read sets: a φ whose edges come from both
// arms of the branch with the two booleans (found := false; if exists { found = true })
// carries the read's answer as surely as the read's own value.
func (t *taint) flags(x *ssa.If) {
	c, found := t.classify(x.Cond)
	if c != exists && c != other || c == exists && found == 0 {
		return
	}
	b := x.Block()
	foundArm := map[bool]int{true: 0, false: 1}[found > 0]
	for _, join := range b.Parent().Blocks {
		for _, instr := range join.Instrs {
			phi, ok := instr.(*ssa.Phi)
			if !ok {
				break
			}
			var arm [2]constant.Value // the one boolean each arm gives
			mixed := false            // an arm gives anything else
			for i, pred := range join.Preds {
				k, _ := phi.Edges[i].(*ssa.Const)
				switch side := armOf(b, pred, join); {
				case side < 0:
				case k == nil || k.Value == nil || k.Value.Kind() != constant.Bool || arm[side] != nil && constant.BoolVal(arm[side]) != constant.BoolVal(k.Value):
					mixed = true
				default:
					arm[side] = k.Value
				}
			}
			if mixed || arm[0] == nil || arm[1] == nil || constant.BoolVal(arm[0]) == constant.BoolVal(arm[1]) {
				continue
			}
			if t.flag[phi] = sign(constant.BoolVal(arm[foundArm])); c == other { // a flag of another property of the row
				t.flag[phi] = 0
			}
			t.add(phi)
		}
	}
}

// armOf says through which arm of the branch ending b an edge pred→join arrives: 0 or 1,
// or -1 when either arm (or neither) may have led to it.
func armOf(b, pred, join *ssa.BasicBlock) int {
	if pred == b {
		return slices.Index(b.Succs, join)
	}
	for side, succ := range b.Succs {
		other := b.Succs[1-side]
		if succ != join && succ.Dominates(pred) && !(other != join && other.Dominates(pred)) {
			return side
		}
	}
	return -1
}

func (t *taint) add(v ssa.Value) {
	if v != nil && !t.vals[v] && v.Referrers() != nil {
		t.vals[v] = true
		t.work = append(t.work, v)
	}
}

// store taints where a value is stored: m.Seq, not the rest of m.
func (t *taint) store(addr ssa.Value) {
	switch a := addr.(type) {
	case *ssa.FieldAddr:
		for _, ref := range model.Refs(a.X) {
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

// pointee taints what a call fills: a read's destinations (any), or a variable handed
// to a call given a tainted value (rows.Scan(&id)), not a database handle.
func (t *taint) pointee(a ssa.Value, any bool) {
	a = unwrap(a)
	if e := spread([]ssa.Value{a}); len(e) != 1 || e[0] != a { // Scan(&a, &b)
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
	limit         // a count or an amount against a limit: a cap
	exists        // whether a row was found
	other         // another test of what was read: a state, a flag
)

// classify says what cond tests; found is ±1 where it holds with a row (not) found.
func (t *taint) classify(cond ssa.Value) (c class, found int) {
	if f, ok := t.flag[cond]; ok && f != 0 {
		return exists, f
	} else if ok {
		return other, 0
	}
	switch x := cond.(type) {
	case *ssa.UnOp:
		if x.Op == token.NOT {
			c, found = t.classify(x.X)
			return c, -found
		}
	case *ssa.BinOp:
		a, b, op := x.X, x.Y, x.Op
		if t.vals[b] && !t.vals[a] {
			a, b, op = b, a, cmp.Or(mirror[op], op)
		}
		n, isInt := intConst(b)
		switch {
		case !t.vals[a]:
			return none, 0
		case t.vals[b] || !isInt && numeric(a.Type()) || t.sum && numeric(a.Type()):
			return map[bool]class{true: limit, false: other}[numeric(a.Type())], 0 // against the read's own value, or a limit given
		case isNil(b) && types.Identical(a.Type(), errorType) && !t.errAbsent:
			return neutral, 0
		case isNil(b) && types.Identical(a.Type(), errorType):
			return exists, sign(op == token.EQL)
		case isNil(b):
			return exists, sign(op == token.NEQ)
		case !numeric(a.Type()) || !t.count && isField(a) || (op == token.EQL || op == token.NEQ) && n != 0:
			return other, 0 // a state: a row's value against a constant
		case op == token.EQL || op == token.NEQ:
			return exists, sign(op == token.NEQ)
		// A limit of one row asks whether one exists; more is a cap.
		case (op == token.GEQ || op == token.LSS) && n <= 1, (op == token.GTR || op == token.LEQ) && n <= 0:
			return exists, sign(op == token.GEQ || op == token.GTR)
		}
		return limit, 0
	case *ssa.Call:
		if t.vals[x] {
			break // a bool the read returned: below
		}
		fn := calleeOf(&x.Call)
		switch recv, _ := argsOf(&x.Call); {
		case fn != nil && rowsNext[fn.FullName()] && t.vals[recv]:
			return exists, 1 // rows.Next(): a row came back
		case t.errorArg(x):
			return exists, -1 // errors.Is(err, sql.ErrNoRows), ent.IsNotFound(err)
		case slices.ContainsFunc(x.Call.Args, func(a ssa.Value) bool { return t.vals[a] }):
			return other, 0
		}
		return none, 0
	}
	if !t.vals[cond] {
		return none, 0
	} else if t.exists {
		return exists, 1
	}
	return other, 0
}

func (t *taint) errorArg(c *ssa.Call) bool {
	return slices.ContainsFunc(c.Call.Args, func(a ssa.Value) bool { return t.vals[a] && types.Identical(a.Type(), errorType) })
}

// handlesAbsent reports a branch telling "no row" from other errors, or testing what
// the read found: an error returned past it means more than "no row".
func (t *taint) handlesAbsent() bool {
	return slices.ContainsFunc(t.ifs, func(ifs *ssa.If) bool {
		cond := ifs.Cond
		for u, ok := cond.(*ssa.UnOp); ok && u.Op == token.NOT; u, ok = cond.(*ssa.UnOp) {
			cond = u.X
		}
		c, isCall := cond.(*ssa.Call)
		b, isBin := cond.(*ssa.BinOp)
		class, _ := t.classify(cond)
		return class == other || class == limit || isCall && t.errorArg(c) || isBin && types.Identical(b.X.Type(), errorType) && !isNil(b.X) && !isNil(b.Y)
	})
}

var (
	errorType = types.Universe.Lookup("error").Type()
	mirror    = map[token.Token]token.Token{token.LSS: token.GTR, token.GTR: token.LSS, token.LEQ: token.GEQ, token.GEQ: token.LEQ}
)

func sign(b bool) int {
	if b {
		return 1
	}
	return -1
}

func numeric(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsNumeric != 0
}

func isField(v ssa.Value) bool {
	_, f := v.(*ssa.Field)
	u, load := v.(*ssa.UnOp)
	if load {
		_, load = u.X.(*ssa.FieldAddr)
	}
	return f || load
}

func isNil(v ssa.Value) bool {
	c, ok := v.(*ssa.Const)
	return ok && c.Value == nil
}

func intConst(v ssa.Value) (int64, bool) {
	if c, ok := v.(*ssa.Const); ok && c.Value != nil {
		return constant.Int64Val(constant.ToInt(c.Value))
	}
	return 0, false
}

// reach reports whether block to can be reached from from, not through the blocks not.
func reach(from, to *ssa.BasicBlock, not ...*ssa.BasicBlock) bool {
	seen := map[*ssa.BasicBlock]bool{}
	for _, b := range not {
		seen[b] = true
	}
	for stack := []*ssa.BasicBlock{from}; len(stack) > 0; {
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

// decides returns a branch on the read, of a class accept takes, one way of which
// leads to the call in block at and the other not (but by the next turn of a loop,
// which reads again). A branch before the read, or looping over what it returned,
// decides nothing. For an insert, a branch that knows which way means "found" must
// lead to it where nothing was found, and one that shows it runs only where a row was
// found (a token issued after its refresh token was read) means the read decides
// nothing: the insert follows from that row.
func (t *taint) decides(read, at *ssa.BasicBlock, claim bool, accept func(class, *ssa.If) bool) *ssa.If {
	var decided *ssa.If
	for _, ifs := range t.ifs {
		b := ifs.Block()
		if b == at || len(b.Succs) != 2 || b != read && (!reach(read, b) || reach(b.Succs[0], b, read) || reach(b.Succs[1], b, read)) {
			continue
		}
		c, found := t.classify(ifs.Cond)
		if claim {
			found = 0
		}
		onTrue, onFalse := reach(b.Succs[0], at, b, read), reach(b.Succs[1], at, b, read)
		switch {
		case onTrue == onFalse:
		case c == exists && found != 0 && onTrue == (found > 0) && !accept(limit, ifs):
			return nil // only where a row was found
		case decided == nil && accept(c, ifs) && (found == 0 || onTrue == (found < 0)):
			decided = ifs
		}
	}
	return decided
}

// tested returns the columns cond tests: fields, or variables scanned into.
func tested(cond ssa.Value, selected []string, depth int) (cols []string) {
	switch x := cond.(type) {
	case *ssa.Field:
		s := x.X.Type().Underlying().(*types.Struct)
		return []string{sqlfacts.Column(s.Field(x.Field).Name(), s.Tag(x.Field))}
	case *ssa.UnOp:
		if fa, ok := x.X.(*ssa.FieldAddr); ok {
			return []string{fieldColumn(fa)}
		}
		if a, ok := x.X.(*ssa.Alloc); ok {
			for _, ref := range model.Refs(a) { // Scan(&state): a's place among the destinations
				if mi, ok := ref.(*ssa.MakeInterface); ok {
					for _, use := range model.Refs(mi) {
						if st, ok := use.(*ssa.Store); ok {
							if ia, ok := st.Addr.(*ssa.IndexAddr); ok {
								if n, ok := intConst(ia.Index); ok && int(n) < len(selected) {
									return selected[n : n+1]
								}
							}
						}
					}
				}
			}
		}
	}
	if instr, ok := cond.(ssa.Instruction); ok && depth < 6 {
		for _, op := range instr.Operands(nil) {
			if *op != nil {
				cols = append(cols, tested(*op, selected, depth+1)...)
			}
		}
	}
	return cols
}

// controlled reports a return a branch on the read decides (return false, nil).
func (t *taint) controlled(ret *ssa.Return) bool {
	return slices.ContainsFunc(t.ifs, func(ifs *ssa.If) bool {
		b := ifs.Block()
		c, _ := t.classify(ifs.Cond)
		return c != none && c != neutral && len(b.Succs) == 2 && reach(b.Succs[0], ret.Block(), b) != reach(b.Succs[1], ret.Block(), b)
	})
}
