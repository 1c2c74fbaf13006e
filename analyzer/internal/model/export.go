package model

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// factOf returns the unit's summary in the form of its fact.
func (a *analyzer) factOf(u *unit) *FuncFact {
	if u.fact != nil && u.state == 2 {
		return u.fact
	}
	f := &FuncFact{Sends: u.sends, Keys: u.keys, Retries: u.retries, RetryArg: u.retryArg, SetVerdict: u.setVerdict}
	seen := map[string]bool{} // an effect reached by several calls is one effect to a caller
	for _, e := range u.effs {
		fe := e.Effect
		fe.Params = paramList(e.params)
		if !a.user { // a dependency's effect is made at the analysed code's call
			fe.Site, fe.Made = "", cmp.Or(fe.Made, fe.Site)
		}
		if k := fmt.Sprintf("%#v", fe); !seen[k] {
			seen[k] = true
			f.Effects = append(f.Effects, fe)
		}
	}
	if d := u.decl; d != nil {
		f.Kind, f.Latch = string(d.Kind), d.HasTable()
		f.Wrapper = d.Func.Name.Name + "Once"
		for _, k := range d.Key {
			for _, p := range paramList(a.exprParams(u, k.Text)) {
				f.Keys = append(f.Keys, KeyParam{Param: p, Kind: string(d.Kind)})
			}
		}
	}
	if a.user {
		res := a.results(u)
		f.Result = Flow{Flags: res.flags, Params: paramList(res.params), Buckets: paramList(res.buckets & res.params), Source: res.srcName}
		if res.flags == 0 {
			f.Result.Source = ""
		}
	}
	if u.state == 2 {
		u.fact = f
	}
	return f
}

// export stores the package's facts.
func (a *analyzer) export() {
	any := false
	for _, u := range a.sortedUnits() {
		u.fact = nil // made again with what decide reported: a caller does not report it twice
		// Importers can name a package-level function or a method of a package-level type.
		if f := a.factOf(u); !f.empty() && (u.obj.Parent() == u.obj.Pkg().Scope() || u.obj.Signature().Recv() != nil) {
			a.pass.ExportObjectFact(u.obj, f)
			any = true
		}
	}
	pf := &PackageFact{Impls: a.impls(), RootTypes: slices.Sorted(maps.Keys(a.rootTypes))}
	if any || len(pf.Impls) > 0 || len(pf.RootTypes) > 0 {
		a.pass.ExportPackageFact(pf)
	}
}
