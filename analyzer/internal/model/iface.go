package model

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// invoke adds what a call through an interface reaches: the catalogue's entry for its method,
// or the effects of the implementations in sight (this package's types and its imports').
// Several implementations with effects are one effect at the call, which one promise covers.
func (a *analyzer) invoke(u *unit, f *ssa.Function, call ssa.CallInstruction, c *ctx, m *types.Func) {
	name := FuncName(m)
	if e, ok := a.cat.Effect(name); ok {
		a.addEffect(u, f, call, c, a.siteEffect(u, f, call, m, e))
		return
	}
	if a.cat.IsRead(name) {
		return
	}
	if call.Common().IsInvoke() {
		for _, t := range madeFrom(call.Common().Value, map[ssa.Value]bool{}) {
			obj, _, _ := types.LookupFieldOrMethod(t, true, m.Pkg(), m.Name())
			if fn, ok := obj.(*types.Func); ok {
				if e, ok := a.cat.Effect(FuncName(fn)); ok {
					a.addEffect(u, f, call, c, a.siteEffect(u, f, call, fn, e))
					return
				}
			}
		}
	}
	iface, ok := call.Common().Value.Type().Underlying().(*types.Interface)
	if !call.Common().IsInvoke() {
		iface, ok = recvType(m).Underlying().(*types.Interface)
	}
	if !ok {
		return
	}
	var groups [][]*eff
	impls, idle := a.implementations(iface, m)
	for _, effs := range impls {
		var mapped []*eff
		for _, e := range effs {
			if ne := a.mapEffect(u, call, m, e); ne != nil {
				mapped = append(mapped, ne)
			}
		}
		if len(mapped) > 0 {
			groups = append(groups, mapped)
		}
	}
	if slices.ContainsFunc(slices.Concat(groups...), (*eff).known) {
		// What the catalogue classifies names the call; a request it does not is the coverage's.
		for i := range groups {
			groups[i] = slices.DeleteFunc(groups[i], func(e *eff) bool { return !e.known() })
		}
		groups = slices.DeleteFunc(groups, func(g []*eff) bool { return len(g) == 0 })
	}
	// In a dependency, an effectless implementation beside the call means configuration chooses.
	if !a.user && idle {
		return
	}
	if len(groups) == 1 {
		for _, e := range groups[0] {
			a.addEffect(u, f, call, c, e)
		}
		return
	}
	if len(groups) == 0 {
		a.openCall(u, f, call, c, m, iface)
		return
	}
	first := groups[0][0]
	one := &eff{Effect: Effect{Site: a.posString(call.Pos()), Func: Display(u.obj), Via: Display(m), What: first.What, Class: first.Class, Fresh: true}, pos: call.Pos()}
	for _, g := range groups {
		for _, e := range g {
			one.params |= e.params
			one.Fresh = one.Fresh && e.Fresh
			one.Impls = append(one.Impls, e.Site)
			one.implPos = append(one.implPos, a.position(e.pos, e.Site))
			if one.Repeat == "" && e.Repeat != "" {
				one.Repeat, one.repeatPos = e.Repeat, e.repeatPos
			}
		}
	}
	a.site(one)
	a.addEffect(u, f, call, c, one)
}

// madeFrom returns the concrete types an interface value is made from in its function: a
// conversion of a concrete value, or a φ of values some of which are, as where a library
// holds the standard library's client behind an interface of its own. A catalogued method
// of one of them is what the call reaches.
func madeFrom(v ssa.Value, seen map[ssa.Value]bool) []types.Type {
	if seen[v] {
		return nil
	}
	seen[v] = true
	var from []ssa.Value
	switch x := v.(type) {
	case *ssa.MakeInterface:
		return []types.Type{x.X.Type()}
	case *ssa.ChangeInterface:
		from = []ssa.Value{x.X}
	case *ssa.Phi:
		from = x.Edges
	case *ssa.UnOp: // a variable a closure shares lives in a cell: what is stored there
		if cell, ok := x.X.(*ssa.Alloc); ok && x.Op == token.MUL {
			for _, st := range storesTo(cell) {
				from = append(from, st.Val)
			}
		}
	}
	var out []types.Type
	for _, w := range from {
		out = append(out, madeFrom(w, seen)...)
	}
	return out
}

// implementations returns, per implementation of iface in sight, the effects of its method m,
// and whether one here is known to have none (a wrapper still being summarised is not).
func (a *analyzer) implementations(iface *types.Interface, m *types.Func) (out [][]Effect, idle bool) {
	for _, fn := range Implementers(a.pass.Fset, a.pass.Pkg, iface, m) {
		var effs []Effect
		if s := a.summaryOf(fn); s != nil {
			effs = closedOnly(s.Effects)
		}
		if len(effs) > 0 {
			out = append(out, effs)
		} else if u := a.units[fn.Origin()]; u == nil || u.state == 2 {
			idle = true
		}
	}
	keys := ifaceKeys(iface)
	for _, p := range a.importClosure() {
		if f := a.packageFact(p); f != nil {
			for _, im := range f.Impls {
				missing := func(k string) bool {
					_, found := slices.BinarySearch(im.Methods, k)
					return !found
				}
				if effs := im.Effects[m.Name()]; len(effs) > 0 && !slices.ContainsFunc(keys, missing) {
					out = append(out, effs)
				}
			}
		}
	}
	return out, idle
}

// Implementers returns method m of each of pkg's concrete types that implement iface,
// leaving out those declared in test files (a test's doubles).
func Implementers(fset *token.FileSet, pkg *types.Package, iface *types.Interface, m *types.Func) (out []*types.Func) {
	for _, n := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(n).(*types.TypeName)
		if !ok || tn.IsAlias() || types.IsInterface(tn.Type()) || strings.HasSuffix(fset.Position(tn.Pos()).Filename, "_test.go") ||
			!types.Implements(types.NewPointer(tn.Type()), iface) {
			continue
		}
		obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, m.Pkg(), m.Name())
		if fn, ok := obj.(*types.Func); ok {
			out = append(out, fn)
		}
	}
	return out
}

// openCall adds a call through an interface of the module's own that no implementation in
// sight answers, for the standalone driver (Config.Summary) to join with implementations in
// packages this one does not import. Under go vet alone it is only a site an ignore may name.
func (a *analyzer) openCall(u *unit, f *ssa.Function, call ssa.CallInstruction, c *ctx, m *types.Func, iface *types.Interface) {
	if !a.ownInterface(m) {
		return
	}
	e := &eff{Effect: Effect{Site: a.posString(call.Pos()), Func: Display(u.obj), Via: Display(m), Iface: ifaceKeys(iface), Method: m.Name()}, pos: call.Pos()}
	a.site(e) // an ignore here is in use under either driver
	if a.cfg.Summary {
		a.addEffect(u, f, call, c, e)
	}
}

// ownInterface reports whether m is a method of an interface declared in the analysed
// module, whose implementations the driver sees.
func (a *analyzer) ownInterface(m *types.Func) bool {
	return a.user && a.pass.Module != nil && a.pass.Module.Path != "" && a.own(m.Pkg()) && types.IsInterface(recvType(m))
}

// own reports whether p is this package or another of the analysed module.
func (a *analyzer) own(p *types.Package) bool {
	mod := a.pass.Module
	return p == a.pass.Pkg || a.user && p != nil && mod != nil && mod.Path != "" && (p.Path() == mod.Path || strings.HasPrefix(p.Path(), mod.Path+"/"))
}

// closedOnly drops open calls: an implementation is known by the effects it performs.
func closedOnly(effs []Effect) []Effect {
	return slices.DeleteFunc(slices.Clone(effs), func(e Effect) bool { return e.open() })
}

// ifaceKeys lists an interface's methods as methodKey writes them.
func ifaceKeys(iface *types.Interface) []string {
	keys := make([]string, iface.NumMethods())
	for i := range keys {
		keys[i] = methodKey(iface.Method(i))
	}
	return keys
}

// impls lists the package's types whose methods have effects, for importers' interface
// calls.
func (a *analyzer) impls() []Impl {
	var out []Impl
	scope := a.pass.Pkg.Scope()
	for _, n := range scope.Names() {
		tn, ok := scope.Lookup(n).(*types.TypeName)
		if !ok || tn.IsAlias() || types.IsInterface(tn.Type()) || a.isTest(tn.Pos()) {
			continue
		}
		im := Impl{Type: a.pass.Pkg.Path() + "." + n, Effects: map[string][]Effect{}}
		for sel := range types.NewMethodSet(types.NewPointer(tn.Type())).Methods() {
			fn := sel.Obj().(*types.Func)
			im.Methods = append(im.Methods, methodKey(fn))
			if u := a.units[fn.Origin()]; u != nil && fn.Pkg() == a.pass.Pkg {
				if effs := closedOnly(a.factOf(u).Effects); len(effs) > 0 {
					im.Effects[fn.Name()] = effs
				}
			}
		}
		if len(im.Effects) > 0 {
			slices.Sort(im.Methods)
			out = append(out, im)
		}
	}
	return out
}

// position returns a position for a site: its own in this package, or one made from the
// site's file:line:col for a site in another package.
func (a *analyzer) position(pos token.Pos, site string) token.Pos {
	if pos.IsValid() && a.inPackage(pos) {
		return a.callStart(pos)
	}
	return a.synthesize(site)
}
