package effects

import (
	"go/types"
	"sort"
	"strings"
)

// implementationFact finds the effect behind a method of an interface declared in
// another package of the module, when that package exports none: the interface's package
// cannot see implementations that live in packages importing it (the SMTP client behind
// mailer.Client, in mailer/smtpclient), so it exports no fact on the method. The calling
// package usually imports those packages too, directly or not (it wires the client in):
// their concrete types that implement the interface carry their method's effect as a
// fact, and the first of them in import-path order whose effect is not reported further
// down (or else the first at all) stands for the call, as in-package implementations do.
func (s *scanner) implementationFact(m *types.Func, out *EffectFact) bool {
	if s.implFacts == nil {
		s.implFacts = map[*types.Func]*EffectFact{}
	}
	if f, ok := s.implFacts[m]; ok {
		if f == nil {
			return false
		}
		*out = *f
		return true
	}
	s.implFacts[m] = nil
	iface, ok := m.Signature().Recv().Type().Underlying().(*types.Interface)
	if !ok || m.Pkg() == nil || !s.sameModule(m.Pkg().Path()) {
		return false
	}
	var pick *EffectFact
	for _, pkg := range s.moduleImports() {
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() || types.IsInterface(tn.Type()) {
				continue
			}
			if named, ok := tn.Type().(*types.Named); !ok || named.TypeParams().Len() > 0 {
				continue
			}
			for _, t := range []types.Type{tn.Type(), types.NewPointer(tn.Type())} {
				if !types.Implements(t, iface) {
					continue
				}
				obj, _, _ := types.LookupFieldOrMethod(t, true, pkg, m.Name())
				impl, ok := obj.(*types.Func)
				var f EffectFact
				if ok && impl.Pkg() == pkg && s.pass.ImportObjectFact(impl, &f) && !f.Cond {
					if pick == nil || pick.Reported && !f.Reported {
						f.Chain = append([]string{FuncName(impl)}, f.Chain...)
						pick = &f
					}
				}
				break
			}
		}
	}
	s.implFacts[m] = pick
	if pick == nil {
		return false
	}
	*out = *pick
	return true
}

// moduleImports returns the packages of the module the package imports, directly or
// not, in import-path order.
func (s *scanner) moduleImports() []*types.Package {
	if s.modImports != nil {
		return s.modImports
	}
	seen := map[*types.Package]bool{}
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		for _, imp := range p.Imports() {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			walk(imp)
		}
	}
	walk(s.pass.Pkg)
	s.modImports = []*types.Package{}
	for p := range seen {
		if s.sameModule(p.Path()) {
			s.modImports = append(s.modImports, p)
		}
	}
	sort.Slice(s.modImports, func(i, j int) bool { return s.modImports[i].Path() < s.modImports[j].Path() })
	return s.modImports
}

// sameModule reports whether the package path belongs to the module being analysed: under
// its module path, or, with no module known (GOPATH mode), under the same first element.
func (s *scanner) sameModule(path string) bool {
	root := ""
	if m := s.pass.Module; m != nil && m.Path != "" {
		root = m.Path
	} else {
		parts := strings.SplitN(s.pass.Pkg.Path(), "/", 4)
		if strings.Contains(parts[0], ".") && len(parts) >= 3 {
			parts = parts[:3] // github.com/org/app
		} else {
			parts = parts[:1]
		}
		root = strings.Join(parts, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}
