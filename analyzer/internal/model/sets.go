package model

import (
	"go/types"
	"slices"

	"github.com/oncekit/once/analyzer/catalog"

	"golang.org/x/tools/go/ssa"
)

// setOps are the methods of the process-local sets the analyzer knows by identity: what
// each does to the set (check, write, or both).
var setOps = map[string]struct{ check, write bool }{
	"(sync.Map).Load":                                  {check: true},
	"(sync.Map).LoadOrStore":                           {check: true, write: true},
	"(sync.Map).LoadAndDelete":                         {check: true},
	"(sync.Map).Swap":                                  {check: true, write: true},
	"(sync.Map).Store":                                 {write: true},
	"(github.com/patrickmn/go-cache.Cache).Get":        {check: true},
	"(github.com/patrickmn/go-cache.Cache).Add":        {check: true, write: true},
	"(github.com/patrickmn/go-cache.Cache).Set":        {write: true},
	"(github.com/patrickmn/go-cache.Cache).SetDefault": {write: true},
}

// setCheck is a check of a lasting set whose answer decides a branch.
type setCheck struct {
	set string
	at  ssa.Instruction
	ifs []*ssa.If
}

// findSets reports a set that lasts the process (a package-level map, sync.Map or
// go-cache, or one in a field of the receiver), checked and written in a function that
// then performs an effect no promise covers: a guard that one restart, or a second
// replica, forgets (ONCE003). A function answering a bool from such a check and write is
// a verdict its callers' branches read the same way.
func (a *analyzer) findSets() {
	type scan struct {
		checks []setCheck
		writes map[string]bool
	}
	scans := map[*unit]*scan{}
	for round := 0; round < 2; round++ {
		// The first round finds the verdicts, which the second reads at their calls.
		for _, u := range a.sortedUnits() {
			sc := &scan{writes: map[string]bool{}}
			scans[u] = sc
			for ins := range instrs[ssa.Instruction](withLiterals(u.fn)...) {
				a.setOp(u, ins, &sc.checks, sc.writes)
			}
			res := u.obj.Signature().Results()
			if !u.setVerdict && res.Len() == 1 && types.Identical(res.At(0).Type(), types.Typ[types.Bool]) &&
				slices.ContainsFunc(sc.checks, func(c setCheck) bool { return c.set != "" && sc.writes[c.set] }) {
				u.setVerdict, u.fact = true, nil
			}
		}
	}
	for _, u := range a.sortedUnits() {
		if u.decl != nil && Covers(u.decl.Kind) {
			continue
		}
		for _, c := range scans[u].checks {
			if c.set != "" && !scans[u].writes[c.set] {
				continue
			}
			// The first effect of the unit the check's branch leads to.
			i := slices.IndexFunc(u.effs, func(e *eff) bool { return behind(c, e) && e.known() })
			if i < 0 {
				continue
			}
			// An effect made right here behind the set is this finding's: one per
			// mistake. One made further down is reported where it is made.
			for _, x := range u.effs {
				if behind(c, x) && x.pos == x.at.Pos() {
					x.Reported = true
				}
			}
			name := c.set
			if name == "" { // a call of a verdict
				fn, _ := calleeFunc(c.at.(ssa.CallInstruction).Common())
				name = "the set behind " + Display(fn)
			}
			a.res.Sets = append(a.res.Sets, &SetFinding{Pos: a.callStart(c.at.Pos()), Set: name, Effect: u.effs[i].Effect})
		}
	}
}

// setOp records what one instruction does to a lasting set.
func (a *analyzer) setOp(u *unit, ins ssa.Instruction, checks *[]setCheck, writes map[string]bool) {
	check := func(set string, v ssa.Value) {
		if ifs := branchesOn(v); len(ifs) > 0 {
			*checks = append(*checks, setCheck{set: set, at: ins, ifs: ifs})
		}
	}
	switch x := ins.(type) {
	case *ssa.Lookup:
		if s := lastingSet(u, x.X); s != "" {
			check(s, x)
		}
	case *ssa.MapUpdate:
		if s := lastingSet(u, x.Map); s != "" {
			writes[s] = true
		}
	case ssa.CallInstruction:
		fn, _ := calleeFunc(x.Common())
		if fn == nil {
			return
		}
		if op, ok := setOps[catalog.Normalize(FuncName(fn))]; ok {
			s := lastingSet(u, ArgAt(x.Common(), 0))
			if op.write && s != "" {
				writes[s] = true
			}
			if v, isCall := x.(*ssa.Call); op.check && isCall && s != "" {
				check(s, v)
			}
			return
		}
		if s := a.summaryOf(fn); s != nil && s.SetVerdict {
			if v, ok := x.(*ssa.Call); ok {
				check("", v)
			}
		}
	}
}

// lastingSet names the set v reaches when it lasts the process: a package-level
// variable, or a field of the method's receiver; "" otherwise.
func lastingSet(u *unit, v ssa.Value) string {
	for depth := 0; depth < 6 && v != nil; depth++ {
		switch x := v.(type) {
		case *ssa.UnOp:
			if p := paramOf(x); p != nil {
				return ""
			}
			v = x.X
		case *ssa.Global:
			return x.Pkg.Pkg.Name() + "." + x.Name()
		case *ssa.FieldAddr:
			if p := paramOf(x.X); p != nil && u.obj.Signature().Recv() != nil && len(u.fn.Params) > 0 && p == u.fn.Params[0] {
				st, ok := x.X.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct)
				if !ok {
					return ""
				}
				if n, ok := derefNamed(p.Type()).(*types.Named); ok {
					return n.Obj().Pkg().Name() + "." + n.Obj().Name() + "." + st.Field(x.Field).Name()
				}
				return st.Field(x.Field).Name()
			}
			return ""
		case *ssa.FreeVar:
			v = binding(x)
		default:
			return ""
		}
	}
	return ""
}

// behind reports whether a branch of the check leads to e, in the check's function.
func behind(c setCheck, e *eff) bool {
	return e.at != nil && e.at.Parent() == c.at.Parent() &&
		slices.ContainsFunc(c.ifs, func(i *ssa.If) bool { return reaches(i.Block(), e.at.Block(), nil) || i.Block() == e.at.Block() })
}
