package effects

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// LatchFact marks a function that tells its caller whether it took a hand-written latch:
// it sends a statement a repeat refuses (sqltext.Stmt.Refuses: a lease row taken by
// INSERT .. ON CONFLICT .. DO UPDATE .. WHERE lock_until < now, a pg_try_advisory_lock,
// an UPDATE from an old state, a DELETE of a one-time token, an insert ON CONFLICT DO
// NOTHING), or calls such a function, and reports through its results whether the
// statement changed a row.
type LatchFact struct {
	// Result is the index of the bool result that is true when the latch was taken; -1
	// when a refusal comes back as a non-nil error (the last result).
	Result int
}

// AFact marks LatchFact as a fact.
func (*LatchFact) AFact() {}

func (f *LatchFact) String() string {
	if f.Result < 0 {
		return "latch(err)"
	}
	return "latch(bool)"
}

// latchRegion is the part of a function body that runs only after a latch was taken:
// the statements after `if !taken { return }` in its block, or the body of `if taken`.
type latchRegion struct {
	from, to token.Pos
	check    latchCheck
}

// latchCheck is a function's branch on a latch's outcome.
type latchCheck struct {
	stmt *ast.IfStmt
	// exits: the branch leaves the block (return, continue, break, panic), so what
	// follows it runs only once the latch was taken.
	exits bool
	// ret is the branch's final return, if it ends in one.
	ret *ast.ReturnStmt
}

// findLatches finds the package's latch functions (see LatchFact), through the facts of
// the packages it imports and the calls between its own functions, and each function's
// latch regions.
func (s *scanner) findLatches() {
	s.latches = map[*types.Func]int{}
	// A latch may be built on another of the package's: iterate to a fixpoint (the set
	// only grows, and is bounded by the functions).
	for range 8 {
		changed := false
		for _, fn := range s.res.Funcs {
			if fn.Test || fn.Directive != nil {
				continue
			}
			if _, ok := s.latches[fn.Obj]; ok {
				continue
			}
			if r, ok := s.latchOf(fn); ok {
				s.latches[fn.Obj] = r
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for _, fn := range s.res.Funcs {
		vals := s.latchValues(fn)
		fn.latched = s.latchChecks(fn.Decl.Body, vals)
	}
}

// latchOf reports whether fn is a latch, and which of its results says so.
func (s *scanner) latchOf(fn *Func) (int, bool) {
	sig := fn.Obj.Signature()
	res := sig.Results()
	if res.Len() == 0 {
		return 0, false
	}
	errLast := isErrorType(res.At(res.Len() - 1).Type())
	vals := s.latchValues(fn)
	if len(vals.vars) == 0 && !vals.any {
		return 0, false
	}
	// return affected == 1, nil / return taken
	found, result := false, -1
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		ret, ok := n.(*ast.ReturnStmt)
		if !ok || len(ret.Results) != res.Len() || found {
			return !found
		}
		for i, e := range ret.Results {
			if isBool(res.At(i).Type()) && s.mentionsLatch(e, vals) {
				found, result = true, i
			}
		}
		return !found
	})
	if found {
		return result, true
	}
	// if !taken { return false } / if affected == 0 { return errors.New(...) }
	for _, r := range s.latchChecks(fn.Decl.Body, vals) {
		c := r.check
		if !c.exits || c.ret == nil || len(c.ret.Results) != res.Len() {
			continue
		}
		for i, e := range c.ret.Results {
			if id, ok := ast.Unparen(e).(*ast.Ident); ok && id.Name == "false" && isBool(res.At(i).Type()) {
				return i, true
			}
		}
		if errLast {
			if id, ok := ast.Unparen(c.ret.Results[res.Len()-1]).(*ast.Ident); !ok || id.Name != "nil" {
				return -1, true
			}
		}
	}
	// return err / return fmt.Errorf("insert: %w", err): the refusal's error itself,
	// wrapped or not, as the function's last statement (a repository's Insert).
	if errLast && s.returnsLatchErr(fn.Decl.Body, vals) {
		return -1, true
	}
	return 0, false
}

// returnsLatchErr reports whether body ends in a return whose error result is the error
// of a refusing statement (see latchValues), as is or wrapped by a known wrapper
// (fmt.Errorf, errors.Wrap and its kin, stacktrace.Propagate: see errorWraps), with no
// other assignment to that error and no earlier return in the body. Only then does the
// caller's branch on the error tell a repeat's refusal from a first call: a function
// that maps a duplicate to nil, or returns before the insert, tells nothing.
func (s *scanner) returnsLatchErr(body *ast.BlockStmt, vals latchVals) bool {
	if len(body.List) == 0 {
		return false
	}
	ret, ok := body.List[len(body.List)-1].(*ast.ReturnStmt)
	if !ok || len(ret.Results) == 0 {
		return false
	}
	e := ast.Unparen(ret.Results[len(ret.Results)-1])
	if call, ok := e.(*ast.CallExpr); ok {
		if !s.errorWrap(call) || len(call.Args) == 0 {
			return false
		}
		e = ast.Unparen(call.Args[0])
		if f, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func); ok && f.Name() == "Errorf" {
			e = ast.Unparen(call.Args[len(call.Args)-1])
		}
	}
	vr := s.latchErrVar(e, vals)
	if vr == nil {
		return false
	}
	if len(ownReturns(body)) != 1 {
		return false
	}
	assigns := 0
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok && s.pass.TypesInfo.ObjectOf(id) == vr {
					assigns++
				}
			}
		}
		return true
	})
	return assigns == 1
}

// errorWraps are the functions, by package name (forks keep it), that wrap an error and
// pass a refusal on.
var errorWraps = map[string][]string{
	"fmt":        {"Errorf"},
	"xerrors":    {"Errorf"},
	"errors":     {"Wrap", "Wrapf", "WithStack", "WithMessage", "WithMessagef"},
	"stacktrace": {"Propagate"},
	"eris":       {"Wrap", "Wrapf"},
}

// errorWrap reports whether call is one of errorWraps.
func (s *scanner) errorWrap(call *ast.CallExpr) bool {
	f, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func)
	if !ok || f.Pkg() == nil || f.Signature().Recv() != nil {
		return false
	}
	return slices.Contains(errorWraps[f.Pkg().Name()], f.Name())
}

// latchErrVar returns the error variable e names if it holds a refusal, or nil.
func (s *scanner) latchErrVar(e ast.Expr, vals latchVals) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	vr, ok := s.pass.TypesInfo.Uses[id].(*types.Var)
	if !ok || !vals.vars[vr] || !isErrorType(vr.Type()) {
		return nil
	}
	return vr
}

// isErrorType reports whether t is the predeclared error type.
func isErrorType(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Bool
}

// latchVals are the values of a body that say whether a latch was taken.
type latchVals struct {
	vars map[*types.Var]bool // taken, affected, err of a refusing scan
	// results hold the result of a refusing statement (sql.Result, a pgx command tag, a
	// row): their RowsAffected, or the error of their Scan, is the latch's outcome.
	results map[*types.Var]bool
	locks   map[*types.Var]bool // the results that are a try-lock's row
	any     bool                // the body sends a refusing statement or calls a latch
	fn      *Func
}

// latchValues finds the latch values of body: the row count of a refusing statement, the
// error of a refusing statement's Scan, the bool a try-lock scans into, and the bool or
// error result of a latch function.
func (s *scanner) latchValues(fn *Func) latchVals {
	body := fn.Decl.Body
	info := s.pass.TypesInfo
	v := latchVals{vars: map[*types.Var]bool{}, results: map[*types.Var]bool{}, locks: map[*types.Var]bool{}, fn: fn}
	varOf := func(e ast.Expr) *types.Var {
		if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
			e = u.X
		}
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok || id.Name == "_" {
			return nil
		}
		obj := info.Defs[id]
		if obj == nil {
			obj = info.Uses[id]
		}
		vr, _ := obj.(*types.Var)
		return vr
	}
	assign := func(lhs []ast.Expr, rhs ast.Expr) {
		call, ok := ast.Unparen(rhs).(*ast.CallExpr)
		if !ok {
			return
		}
		if st, ok := sqltext.Sent(info, call); ok && s.uniqueInsert(fn, st, call) {
			// _, err := db.Exec("INSERT ...") under a unique key: a repeat's error.
			v.any = true
			if vr := varOf(lhs[len(lhs)-1]); vr != nil && isErrorType(vr.Type()) {
				v.vars[vr] = true
			}
			return
		}
		if st, ok := sqltext.Sent(info, call); ok && st.Refuses && !s.window(fn, st, call) {
			v.any = true
			if vr := varOf(lhs[0]); vr != nil {
				v.results[vr] = true
				v.locks[vr] = st.Kind == sqltext.Lock
			}
			return
		}
		switch {
		case s.rowCount(call, v): // n, err := res.RowsAffected()
			if vr := varOf(lhs[0]); vr != nil {
				v.vars[vr] = true
			}
			return
		case s.refusingScan(call, v) && !s.tryLock(call, v): // err := row.Scan(&id)
			if vr := varOf(lhs[len(lhs)-1]); vr != nil {
				v.vars[vr] = true
			}
			return
		}
		if r, ok := s.latchCall(call); ok {
			v.any = true
			i := r
			if r < 0 {
				i = len(lhs) - 1
			}
			if i < len(lhs) {
				if vr := varOf(lhs[i]); vr != nil {
					v.vars[vr] = true
				}
			}
		}
	}
	// Source order matters (a result is assigned before its RowsAffected is read), and
	// ast.Inspect visits in source order.
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Rhs) == 1 {
				assign(n.Lhs, n.Rhs[0])
			}
		case *ast.ValueSpec:
			if len(n.Values) == 1 && len(n.Names) > 0 {
				lhs := make([]ast.Expr, len(n.Names))
				for i, id := range n.Names {
					lhs[i] = id
				}
				assign(lhs, n.Values[0])
			}
		case *ast.CallExpr:
			if st, ok := sqltext.Sent(info, n); ok && st.Refuses && !s.window(fn, st, n) {
				v.any = true
			} else if _, ok := s.latchCall(n); ok {
				v.any = true // if !locks.TryLock(..) { return }
			}
			// row.Scan(&taken) after SELECT pg_try_advisory_lock($1)
			if s.refusingScan(n, v) && s.tryLock(n, v) {
				for _, a := range n.Args {
					if vr := varOf(a); vr != nil {
						v.vars[vr] = true
					}
				}
			}
		}
		return true
	})
	return v
}

// refusingQuery reports a call sending a statement a repeat refuses.
func (s *scanner) refusingQuery(call *ast.CallExpr, v latchVals) bool {
	st, ok := sqltext.Sent(s.pass.TypesInfo, call)
	return ok && st.Refuses && !s.window(v.fn, st, call)
}

// window reports an insert ON CONFLICT DO NOTHING given a value read from the clock
// (today's date, now): the row it may conflict on is named by the time, so it refuses a
// repeat only until the clock names another row. That is a rate limit (once a day), a
// promise shorter than the effect's, not a latch. A lease's upsert is given times too,
// but as the values it sets; the row is named by the task.
func (s *scanner) window(fn *Func, st sqltext.Stmt, call *ast.CallExpr) bool {
	if st.Kind != sqltext.Insert || st.Upsert {
		return false
	}
	for _, a := range call.Args {
		if s.fromClock(fn, a, 0) {
			return true
		}
	}
	return false
}

// fromClock reports whether e is computed from a time.Time (time.Now(), a clock field's
// call, a date formatted from one): in e itself, in what a local variable it reads was
// assigned, or in what the package's callers of fn pass for a parameter it reads.
func (s *scanner) fromClock(fn *Func, e ast.Expr, depth int) bool {
	if depth > 3 || fn == nil {
		return false
	}
	info := s.pass.TypesInfo
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		x, ok := n.(ast.Expr)
		if !ok {
			return true
		}
		if tv, ok := info.Types[x]; ok && isTime(tv.Type) {
			found = true
			return false
		}
		id, ok := x.(*ast.Ident)
		if !ok {
			return true
		}
		vr, ok := info.Uses[id].(*types.Var)
		if !ok || vr.IsField() {
			return true
		}
		if i := paramIndex(fn.Obj, vr); i >= 0 {
			for _, g := range s.res.Funcs {
				if g == fn || g.Test {
					continue
				}
				ast.Inspect(g.Decl.Body, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok && !found && i < len(c.Args) {
						if callee, ok := typeutil.Callee(info, c).(*types.Func); ok && callee.Origin() == fn.Obj && s.fromClock(g, c.Args[i], depth+1) {
							found = true
						}
					}
					return !found
				})
			}
			return false
		}
		// A local: what it was assigned.
		ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
			a, ok := n.(*ast.AssignStmt)
			if !ok || found || len(a.Lhs) != len(a.Rhs) {
				return !found
			}
			for j, l := range a.Lhs {
				if lid, ok := l.(*ast.Ident); ok && (info.Defs[lid] == vr || info.Uses[lid] == vr) && s.fromClock(fn, a.Rhs[j], depth+1) {
					found = true
				}
			}
			return !found
		})
		return false
	})
	return found
}

func isTime(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Time"
}

// paramIndex returns the index of v among fn's parameters, or -1.
func paramIndex(fn *types.Func, v *types.Var) int {
	ps := fn.Signature().Params()
	for i := range ps.Len() {
		if ps.At(i) == v {
			return i
		}
	}
	return -1
}

// receiverHolds reports whether the receiver of a method call is, or holds, the result
// of a refusing statement.
func (s *scanner) receiverHolds(call *ast.CallExpr, v latchVals) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	found := false
	ast.Inspect(sel.X, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if vr, ok := s.pass.TypesInfo.Uses[n].(*types.Var); ok && v.results[vr] {
				found = true
			}
		case *ast.CallExpr:
			if s.refusingQuery(n, v) {
				found = true
			}
		}
		return !found
	})
	return found
}

// rowCount reports result.RowsAffected() of a refusing statement's result.
func (s *scanner) rowCount(call *ast.CallExpr, v latchVals) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "RowsAffected" && s.receiverHolds(call, v)
}

// refusingScan reports row.Scan(...) of a refusing statement's row: ErrNoRows when an
// insert ON CONFLICT DO NOTHING .. RETURNING, or an UPDATE .. RETURNING, changed nothing.
func (s *scanner) refusingScan(call *ast.CallExpr, v latchVals) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Scan" && s.receiverHolds(call, v)
}

// tryLock reports a Scan of a try-lock's result.
func (s *scanner) tryLock(call *ast.CallExpr, v latchVals) bool {
	found := false
	sel := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	ast.Inspect(sel.X, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if st, ok := sqltext.Sent(s.pass.TypesInfo, c); ok && st.Kind == sqltext.Lock && st.Refuses {
				found = true
			}
		}
		return !found
	})
	if found {
		return true
	}
	// The row was queried into a variable first: look at what that variable holds.
	if id, ok := ast.Unparen(sel.X).(*ast.Ident); ok {
		if vr, ok := s.pass.TypesInfo.Uses[id].(*types.Var); ok && v.results[vr] {
			return v.locks[vr]
		}
	}
	return false
}

// latchCall reports a call of a latch function, here or in an imported package, and the
// result that says whether it was taken.
func (s *scanner) latchCall(call *ast.CallExpr) (int, bool) {
	callee, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func)
	if !ok {
		return 0, false
	}
	callee = callee.Origin()
	if callee.Pkg() == s.pass.Pkg {
		r, ok := s.latches[callee]
		return r, ok
	}
	var fact LatchFact
	if callee.Pkg() != nil && s.pass.ImportObjectFact(callee, &fact) {
		return fact.Result, true
	}
	return 0, false
}

// mentionsLatch reports whether e reads a latch value: one of vals, a row count of a
// refusing statement, or a latch function's call.
func (s *scanner) mentionsLatch(e ast.Expr, vals latchVals) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.Ident:
			if vr, ok := s.pass.TypesInfo.Uses[n].(*types.Var); ok && vals.vars[vr] {
				found = true
			}
		case *ast.CallExpr:
			if s.rowCount(n, vals) {
				found = true
			} else if _, ok := s.latchCall(n); ok {
				found = true
			}
		}
		return !found
	})
	return found
}

// latchChecks returns the branches of body on a latch's outcome, with the part of the
// body each guards.
func (s *scanner) latchChecks(body *ast.BlockStmt, vals latchVals) []latchRegion {
	if len(vals.vars) == 0 && !vals.any {
		return nil
	}
	var out []latchRegion
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		ifs, ok := n.(*ast.IfStmt)
		if !ok {
			return true
		}
		cond := ast.Expr(ifs.Cond)
		if !s.mentionsLatch(cond, vals) && !(ifs.Init != nil && s.initLatch(ifs.Init) && mentionsInit(ifs)) {
			return true
		}
		c := checkOf(ifs)
		if c.exits {
			if len(stack) >= 2 {
				switch p := stack[len(stack)-2].(type) {
				case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
					out = append(out, latchRegion{from: ifs.End(), to: p.End(), check: c})
				}
			}
		} else {
			out = append(out, latchRegion{from: ifs.Body.Pos(), to: ifs.Body.End(), check: c})
		}
		return true
	})
	return out
}

// initLatch reports an if statement's init that calls a latch (`if err := claim(); err
// != nil`).
func (s *scanner) initLatch(init ast.Stmt) bool {
	a, ok := init.(*ast.AssignStmt)
	if !ok || len(a.Rhs) != 1 {
		return false
	}
	call, ok := ast.Unparen(a.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return false
	}
	_, ok = s.latchCall(call)
	return ok
}

// mentionsInit reports whether the condition reads a variable the init assigns.
func mentionsInit(ifs *ast.IfStmt) bool {
	a := ifs.Init.(*ast.AssignStmt)
	for _, l := range a.Lhs {
		if id, ok := l.(*ast.Ident); ok && id.Name != "_" && mentions(ifs.Cond, id.Name) {
			return true
		}
	}
	return false
}

// checkOf says whether a branch leaves the block, and with which return.
func checkOf(ifs *ast.IfStmt) latchCheck {
	c := latchCheck{stmt: ifs}
	if n := len(ifs.Body.List); n > 0 {
		switch last := ifs.Body.List[n-1].(type) {
		case *ast.ReturnStmt:
			c.exits, c.ret = true, last
		case *ast.BranchStmt:
			c.exits = true
		case *ast.ExprStmt:
			if call, ok := last.X.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" {
					c.exits = true
				}
			}
		}
	}
	return c
}

// underLatch returns the latch check a position of fn's body runs after, if any.
func (fn *Func) underLatch(pos token.Pos) *ast.IfStmt {
	for _, r := range fn.latched {
		if pos >= r.from && pos < r.to {
			return r.check.stmt
		}
	}
	return nil
}

// UnderLatch reports whether pos, in fn's body, runs only once a hand-written latch was
// taken (see LatchFact): the check-then-insert there is no race, nothing else holds it.
func (fn *Func) UnderLatch(pos token.Pos) bool { return fn.underLatch(pos) != nil }

// latchKeys returns the caller index's keys (see funcKey) of the latches this package
// knows: its own, and those of the packages it imports, directly or not.
func (s *scanner) latchKeys() map[string]bool {
	if s.latchKeySet != nil {
		return s.latchKeySet
	}
	keys := map[string]bool{}
	add := func(fn *types.Func) {
		recv := ""
		if fn.Signature().Recv() != nil {
			recv = "recv"
		}
		keys[funcKey(fn.Pkg().Path(), recv, fn.Name())] = true
	}
	for fn := range s.latches {
		add(fn)
	}
	for _, f := range s.pass.AllObjectFacts() {
		if _, ok := f.Fact.(*LatchFact); ok {
			if fn, ok := f.Object.(*types.Func); ok && fn.Pkg() != nil {
				add(fn)
			}
		}
	}
	s.latchKeySet = keys
	return keys
}
