package model

import (
	"cmp"
	"go/constant"
	"go/token"
	"go/types"
	"maps"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/catalog"
)

// retryLoop reports whether call is made again only after it failed: every way around a
// loop from it back to it passes a branch taken when its error is non-nil or its HTTP
// status is tested (on the way back or at the header). A loop over items or pages calls
// again after a success too: no retry; a loop of attempts inside one over items is. A
// literal may record its call's failure in a variable of the function around it (the
// tokens to send again), which loops around the literal while the variable holds any.
func retryLoop(f *ssa.Function, call ssa.Instruction) bool {
	v, ok := call.(*ssa.Call)
	if !ok || f.Blocks == nil {
		return false
	}
	failure := map[[2]*ssa.BasicBlock]bool{} // edges taken on failure
	for _, out := range outcomes(v) {
		for _, ifs := range branchesOn(out) {
			// The failure's way is err != nil's or, on a test of the status, the one a 200
			// does not take: the else way when the condition holds for a nil error or a 200.
			// A helper's verdict on the error says nothing either way.
			bin, _ := ifs.Cond.(*ssa.BinOp)
			ok, onElse := bin != nil && isNil(bin.X, bin.Y), bin != nil && bin.Op == token.EQL
			if !ok {
				ok, onElse = evalAt200(ifs.Cond, out)
			}
			if b := ifs.Block(); ok {
				failure[[2]*ssa.BasicBlock{b, b.Succs[map[bool]int{true: 1}[onElse]]}] = true
			}
		}
	}
	if r := retries(f, call.Block(), failure); r || f.Parent() == nil {
		return r
	}
	recorded := map[[2]*ssa.BasicBlock]bool{} // the parent's edges taken once a failure is recorded
	for st := range instrs[*ssa.Store](f) {
		fv, ok := st.Addr.(*ssa.FreeVar)
		if !ok || !reaches(call.Block(), st.Block(), nil) || reaches(call.Block(), st.Block(), failure) || binding(fv) == nil {
			continue
		}
		for _, r := range Refs(binding(fv)) {
			if load, ok := r.(*ssa.UnOp); ok {
				for _, ifs := range branchesOn(load) {
					if c, ok := emptyValue(ifs.Cond, load).(constant.Value); ok && c.Kind() == constant.Bool {
						b := ifs.Block()
						recorded[[2]*ssa.BasicBlock{b, b.Succs[map[bool]int{true: 1}[constant.BoolVal(c)]]}] = true
					}
				}
			}
		}
	}
	for mc := range instrs[*ssa.MakeClosure](f.Parent()) {
		if mc.Fn == f && retries(f.Parent(), mc.Block(), recorded) {
			return true
		}
	}
	return false
}

// retriedParam returns the parameter of function type f calls again in a retry loop,
// from 1 in its signature's order: f is a retry helper. 0 for none.
func retriedParam(f *ssa.Function) int {
	for call := range instrs[*ssa.Call](f) {
		p, _ := call.Call.Value.(*ssa.Parameter)
		if i := slices.Index(f.Params, p); p != nil && i >= 0 && !call.Call.IsInvoke() && retryLoop(f, call) {
			return i + 1 + f.Signature.Params().Len() - len(f.Params)
		}
	}
	return 0
}

// retry returns how fn runs again a function it is given: a retry helper of the
// catalogue, or one of the analysed code (its fact, in another package).
func (a *analyzer) retry(fn *types.Func, name string) *catalog.Retry {
	if r := a.cat.Retry(name); r != nil {
		return r
	}
	if f := a.summaryOf(fn); f != nil && f.RetryArg > 0 {
		return &catalog.Retry{Func: name, Arg: f.RetryArg - 1}
	}
	return nil
}

// retries reports whether a loop holds home whose every way around from home back to home
// passes an edge of failure.
func retries(f *ssa.Function, home *ssa.BasicBlock, failure map[[2]*ssa.BasicBlock]bool) bool {
	for h, body := range loops(f) {
		if len(failure) == 0 || !body[home] {
			continue
		}
		leave := map[[2]*ssa.BasicBlock]bool{}
		for b := range body {
			for _, s := range b.Succs {
				leave[[2]*ssa.BasicBlock{b, s}] = !body[s]
			}
		}
		if reaches(home, h, leave) { // the failure is passed on the way back, or tested at the header
			if maps.Copy(leave, failure); !reaches(home, h, leave) || !reaches(h, home, leave) {
				return true
			}
		}
	}
	return false
}

// emptyValue evaluates v, a condition on a variable's loaded value, as it holds while the
// variable is empty (no length, zero, false or nil), or returns nil.
func emptyValue(v, load ssa.Value) any {
	switch x := v.(type) {
	case *ssa.Const:
		return cmp.Or(x.Value, constant.MakeInt64(0)) // nil compares as none
	case *ssa.UnOp:
		if x == load {
			if b, ok := x.Type().Underlying().(*types.Basic); ok && b.Info()&types.IsBoolean != 0 {
				return constant.MakeBool(false)
			}
			return constant.MakeInt64(0)
		}
	case *ssa.Call:
		if b, ok := x.Call.Value.(*ssa.Builtin); ok && b.Object() == types.Universe.Lookup("len") && x.Call.Args[0] == load {
			return constant.MakeInt64(0)
		}
	case *ssa.BinOp:
		l, okl := emptyValue(x.X, load).(constant.Value)
		r, okr := emptyValue(x.Y, load).(constant.Value)
		ordered := x.Op.Precedence() == token.LSS.Precedence() && x.Op != token.EQL && x.Op != token.NEQ
		if okl && okr && l.Kind() == r.Kind() && (x.Op == token.EQL || x.Op == token.NEQ || ordered && l.Kind() == constant.Int) {
			return constant.MakeBool(constant.Compare(l, x.Op, r))
		}
	}
	return nil
}

// outcomes returns the values by which a call's failure is seen: its error, the status
// code of an *http.Response it returns, or a number of a helper's own answer (kept in a
// variable or not), which a comparison with a status code may show to be one.
func outcomes(v *ssa.Call) []ssa.Value {
	var out []ssa.Value
	var add func(x ssa.Value)
	add = func(x ssa.Value) {
		if types.Identical(x.Type(), types.Universe.Lookup("error").Type()) {
			out = append(out, x)
			return
		}
		for _, r := range Refs(x) {
			switch r := r.(type) {
			case *ssa.FieldAddr:
				if typeName(x.Type()) == "net/http.Response" {
					out = append(out, r)
				} else {
					out = append(out, ints(Refs(r)...)...)
				}
			case *ssa.Field:
				out = append(out, ints(r)...)
			case *ssa.Store:
				if _, ok := x.Type().Underlying().(*types.Struct); ok && r.Val == x {
					add(r.Addr)
				}
			}
		}
	}
	if tup, ok := v.Type().(*types.Tuple); ok {
		for _, r := range Refs(v) {
			if ex, ok := r.(*ssa.Extract); ok && ex.Index < tup.Len() {
				add(ex)
			}
		}
	} else {
		add(v)
	}
	return out
}

// ints returns the values of type int among instrs.
func ints(instrs ...ssa.Instruction) (out []ssa.Value) {
	for _, i := range instrs {
		if v, ok := i.(ssa.Value); ok && isInt(v) {
			out = append(out, v)
		}
	}
	return out
}

func isInt(v ssa.Value) bool { return types.Identical(v.Type().Underlying(), types.Typ[types.Int]) }

// branchesOn returns the branches whose condition derives from v.
func branchesOn(v ssa.Value) []*ssa.If {
	var out []*ssa.If
	seen := map[ssa.Value]bool{}
	var walk func(x ssa.Value, depth int)
	walk = func(x ssa.Value, depth int) {
		if seen[x] || depth > 6 || x.Referrers() == nil {
			return
		}
		seen[x] = true
		for _, r := range Refs(x) {
			switch r := r.(type) {
			case *ssa.If:
				out = append(out, r)
			case *ssa.BinOp, *ssa.UnOp, *ssa.Call, *ssa.Phi, *ssa.Field, *ssa.ChangeInterface, *ssa.TypeAssert, *ssa.Extract:
				walk(r.(ssa.Value), depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}

// evalAt200 evaluates a condition on an HTTP status as it holds for a 200: a response's
// StatusCode, or out, a number of a helper's answer compared with a status code.
func evalAt200(v, out ssa.Value) (ok, val bool) {
	bin, isBin := v.(*ssa.BinOp)
	if !isBin {
		return false, false
	}
	x, okx := statusValue(bin.X, out)
	y, oky := statusValue(bin.Y, out)
	if !okx || !oky || isInt(out) && (min(x, y) < 100 || max(x, y) >= 600) {
		return false, false
	}
	val, ok = map[token.Token]bool{token.EQL: x == y, token.NEQ: x != y, token.LSS: x < y, token.LEQ: x <= y, token.GTR: x > y, token.GEQ: x >= y}[bin.Op]
	return ok, val
}

// statusValue evaluates an expression over a response's StatusCode (or out, a helper's
// number), taken as 200.
func statusValue(v, out ssa.Value) (int64, bool) {
	if v == out && isInt(v) {
		return 200, true
	}
	switch x := v.(type) {
	case *ssa.Const:
		return constInt(x)
	case *ssa.UnOp:
		if fa, ok := x.X.(*ssa.FieldAddr); ok && typeName(fa.X.Type()) == "net/http.Response" {
			return 200, true
		}
	case *ssa.BinOp:
		l, okl := statusValue(x.X, out)
		r, okr := statusValue(x.Y, out)
		if !okl || !okr || r == 0 {
			return 0, false
		}
		switch x.Op {
		case token.QUO:
			return l / r, true
		case token.REM:
			return l % r, true
		case token.SUB:
			return l - r, true
		}
	}
	return 0, false
}

func isNil(x, y ssa.Value) bool {
	return slices.ContainsFunc([]ssa.Value{x, y}, func(v ssa.Value) bool { c, ok := v.(*ssa.Const); return ok && c.IsNil() })
}

// reaches reports whether to is reachable from from's successors without taking an edge
// in skip.
func reaches(from, to *ssa.BasicBlock, skip map[[2]*ssa.BasicBlock]bool) bool {
	seen := map[*ssa.BasicBlock]bool{}
	for stack := []*ssa.BasicBlock{from}; len(stack) > 0; {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, s := range b.Succs {
			if skip[[2]*ssa.BasicBlock{b, s}] {
				continue
			}
			if s == to {
				return true
			}
			if !seen[s] {
				seen[s] = true
				stack = append(stack, s)
			}
		}
	}
	return false
}

// dominates reports whether every path to b passes a first.
func dominates(a, b ssa.Instruction) bool {
	if a.Parent() != b.Parent() {
		return false
	}
	if in := a.Block().Instrs; a.Block() == b.Block() {
		return slices.Index(in, a) <= slices.Index(in, b)
	}
	return a.Block().Dominates(b.Block())
}
