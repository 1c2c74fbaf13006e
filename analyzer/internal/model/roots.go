package model

import (
	"cmp"
	"go/types"
	"maps"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// unitRoot returns what runs the unit again, if a framework does: its type is a handler's,
// the catalogue or a registration names it, or its type embeds a framework's controller.
func (a *analyzer) unitRoot(u *unit) *root {
	if r, ok := a.roots[u.obj]; ok {
		return &r
	}
	if r := a.cat.RootSignature(SignatureString(u.obj.Signature())); r != nil {
		return &root{what: r.Root, pos: u.obj.Pos()}
	}
	if r := a.cat.RootFunc(FuncName(u.obj)); r != nil && r.Arg == nil {
		return &root{what: r.Root, pos: u.obj.Pos()}
	}
	sig := u.obj.Signature()
	if recv := sig.Recv(); recv != nil && u.obj.Exported() && sig.Params().Len() == 0 && sig.Results().Len() == 0 {
		if st, ok := derefNamed(recv.Type()).Underlying().(*types.Struct); ok {
			for i := 0; i < st.NumFields(); i++ {
				if f := st.Field(i); f.Embedded() {
					if r := a.cat.Embedded(typeName(f.Type())); r != nil {
						return &root{what: r.Root, pos: u.obj.Pos()}
					}
				}
			}
		}
	}
	return nil
}

func derefNamed(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// isRootType reports a named function type whose values a framework runs: this package's
// code calls such values where it runs handlers, or an imported package's does.
func (a *analyzer) isRootType(t string) bool {
	return t != "" && (a.rootTypes[t] || slices.ContainsFunc(a.importClosure(), func(p *types.Package) bool {
		f := a.packageFact(p)
		return f != nil && slices.Contains(f.RootTypes, t)
	}))
}

// paramRootType returns the root type of the parameter v is given for, or "".
func (a *analyzer) paramRootType(fn *types.Func, c *ssa.CallCommon, v ssa.Value) string {
	params := fn.Signature().Params()
	for i := range params.Len() {
		if t := typeName(params.At(i).Type()); sigArg(c, fn, i) == v && a.isRootType(t) {
			return t
		}
	}
	return ""
}

// registrations records the functions a call hands to a framework: the methods of a
// service registered after a registrar (a generated RegisterFooServer), and declared
// functions given for a parameter of a root type.
func (a *analyzer) registrations(c *ssa.CallCommon, fn *types.Func) {
	params := fn.Signature().Params()
	for i := 0; i < params.Len(); i++ {
		t := typeName(params.At(i).Type())
		if t == "" {
			continue
		}
		if r := a.cat.Registrar(t); r != nil && i+1 < params.Len() {
			iface, ok := params.At(i + 1).Type().Underlying().(*types.Interface)
			if mi, isMI := sigArg(c, fn, i+1).(*ssa.MakeInterface); ok && isMI {
				for j := 0; j < iface.NumMethods(); j++ {
					obj, _, _ := types.LookupFieldOrMethod(mi.X.Type(), true, iface.Method(j).Pkg(), iface.Method(j).Name())
					if m, ok := obj.(*types.Func); ok {
						a.roots[m.Origin()] = root{what: r.Root, pos: c.Pos()}
					}
				}
			}
		}
		if a.isRootType(t) {
			if g := funcValue(sigArg(c, fn, i)); g != nil {
				a.roots[g.Origin()] = root{what: "run by the framework as a " + t, pos: c.Pos()}
			}
		}
	}
}

// decide makes the ONCE001 findings: effects reached from code that runs again (or, with
// -strict, from any entry of the package) that nothing covers, each once.
func (a *analyzer) decide() {
	for _, u := range a.sortedUnits() {
		// With -strict, a function nothing in its package calls is where the package is
		// entered: what it reaches is judged there.
		top := a.cfg.Strict && !a.called[u.obj] && u.obj.Signature().Recv() == nil
		for _, e := range u.effs {
			j := *e // what runs the unit again is not the effect's, for the unit's callers
			j.repeatBy(u.root, false)
			a.judge(&j, top)
			e.Reported = j.Reported
		}
	}
	for _, e := range a.rootEffs {
		a.judge(e, false)
	}
	for _, g := range a.guards {
		if !HoldsPaidEffect(g.kind) && len(g.effs) > 0 {
			a.res.Requests = append(a.res.Requests, &RequestFinding{Pos: g.pos, Guard: "the " + g.name + " guard", Effect: g.effs[0].Effect})
		}
	}
	// Functions of other packages handed to a framework here.
	for _, obj := range slices.SortedFunc(maps.Keys(a.roots), func(x, y *types.Func) int { return strings.Compare(FuncName(x), FuncName(y)) }) {
		if obj.Pkg() == a.pass.Pkg {
			continue
		}
		if s := a.summaryOf(obj); s != nil {
			r := a.roots[obj]
			for _, e := range s.Effects {
				e.Repeat = cmp.Or(e.Repeat, r.what)
				a.judge(&eff{Effect: e, repeatPos: r.pos}, false)
			}
		}
	}
}

// judge reports e if it is on a repeat path (or -strict asks) and not yet reported.
func (a *analyzer) judge(e *eff, strictTop bool) {
	if e.Site == "" || e.Reported || e.Ignored || e.Repeat == "" && !strictTop || e.Fresh && !a.cfg.Strict || e.Class == RequestClass && !e.Retried {
		return
	}
	e.Reported = true
	if e.open() {
		open := e.Effect
		open.RepeatAt = a.posString(e.repeatPos)
		a.cov.Open = append(a.cov.Open, open)
		return
	}
	// One finding per effect, however many roots of the package reach it.
	f := a.found[e.Site]
	if f == nil {
		f = &Finding{Effect: e.Effect, Strict: e.Repeat == "", ImplPos: e.implPos, Pos: a.position(e.pos, e.Site), MadePos: a.synthesize(e.Made)}
		a.found[e.Site] = f
		a.res.Findings = append(a.res.Findings, f)
	}
	if e.Repeat != "" && e.repeatPos.IsValid() {
		f.Repeats = append(f.Repeats, Repeat{Pos: e.repeatPos, What: e.Repeat})
	}
	for _, u := range e.unrelated {
		if !slices.Contains(f.Unrelated, u) {
			f.Unrelated = append(f.Unrelated, u)
		}
	}
}
