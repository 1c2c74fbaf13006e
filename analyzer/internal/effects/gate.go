package effects

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// SetAccessFact marks a method that only checks, or only writes, a set reached through its
// receiver: IfProcessed(id) answers whether id is in the set and writes nothing,
// TagProcessed(id) adds it and reads nothing. Either alone guards nothing; a function
// that checks through one and writes through the other is a dedupe gate (see findGates).
// On an interface method it says that every implementation in the interface's package is
// such a method. Lasting: the set outlives a request — a go-cache (a store with expiry
// and a janitor, made to outlive requests), or a field of a type the package keeps a
// package-level instance of (a singleton).
type SetAccessFact struct {
	Write   bool
	Lasting bool
	What    string // "go-cache", "map", "sync.Map" or "set"
}

// AFact marks SetAccessFact as a fact.
func (*SetAccessFact) AFact() {}

func (f *SetAccessFact) String() string {
	op := "check"
	if f.Write {
		op = "write"
	}
	return fmt.Sprintf("setAccess(%s %s lasting=%v)", op, f.What, f.Lasting)
}

// gatesOff switches dedupe gates off, for the test that shows their case fails without
// them.
var gatesOff bool

// SetGatesForTest switches the dedupe gates of findGates on or off and returns a function
// restoring the previous setting. Only tests call it, never in parallel with analysis.
func SetGatesForTest(on bool) (restore func()) {
	old := gatesOff
	gatesOff = !on
	return func() { gatesOff = old }
}

// isGoCache reports github.com/patrickmn/go-cache's Cache (or a pointer to it).
func isGoCache(t types.Type) bool {
	if t == nil {
		return false
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Name() == "Cache" &&
		strings.TrimSuffix(n.Obj().Pkg().Path(), "/v2") == "github.com/patrickmn/go-cache"
}

// goCacheOp says whether call, of go-cache method m, checks or writes membership: Get
// looks up (when read to decide), Set and SetDefault write, Add does both (it fails when
// the key is there). A write counts only when the value stored is a marker (a constant,
// struct{}{}): a cache storing what was computed is a cache of values, and a function
// that looks a value up, computes it when missing and stores it is a memo, not a guard.
func goCacheOp(info *types.Info, call *ast.CallExpr, m string, inCond bool) (check, write bool) {
	switch m {
	case "Get", "GetWithExpiration":
		return inCond, false
	case "Set", "SetDefault", "Add":
		if len(call.Args) < 2 || !isMarker(info, call.Args[1]) {
			return false, false
		}
		return m == "Add" && inCond, true
	}
	return false, false
}

// isMarker reports a value that only marks presence: a constant or an empty composite.
func isMarker(info *types.Info, e ast.Expr) bool {
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return true
	}
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		if c, ok := info.Uses[id].(*types.Const); ok && c.Parent() == types.Universe {
			return true
		}
	}
	cl, ok := ast.Unparen(e).(*ast.CompositeLit)
	return ok && len(cl.Elts) == 0
}

// setAccessors finds the package's methods that only check or only write a set reached
// through their receiver, and the interface methods all of whose implementations in the
// package are such methods, and exports a SetAccessFact for each exported one. Like
// setHelpers it runs on packages that take the fast path: the package holding the cache
// usually imports nothing of interest.
func setAccessors(pass *analysis.Pass) map[*types.Func]*SetAccessFact {
	if len(pass.Files) == 0 || inGoroot(pass) {
		return nil
	}
	info := pass.TypesInfo
	out := map[*types.Func]*SetAccessFact{}
	for _, f := range pass.Files {
		if strings.HasSuffix(pass.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Recv == nil {
				continue
			}
			obj, ok := info.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			if fact := accessOf(pass, obj, fd.Body); fact != nil {
				out[obj] = fact
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	// Interface methods whose implementations in the package all check, or all write;
	// only names some access method bears are looked at (a large SDK package has many
	// interfaces and types, and no such method).
	names := map[string]bool{}
	for obj := range out {
		names[obj.Name()] = true
	}
	scope := pass.Pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		iface, ok := tn.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for i := range iface.NumExplicitMethods() {
			m := iface.ExplicitMethod(i)
			if !names[m.Name()] {
				continue
			}
			if fact := implementationsAccess(pass.Pkg, iface, m, out); fact != nil {
				out[m] = fact
			}
		}
	}
	for obj, fact := range out {
		if obj.Exported() {
			pass.ExportObjectFact(obj, fact)
			pass.ExportPackageFact(new(PackageFact))
		}
	}
	return out
}

// accessOf returns the fact of a method that only checks or only writes its receiver's
// set: a check must answer with the finding alone (a bool, returned as the lookup's
// "found"), a write must return nothing, or only an error.
func accessOf(pass *analysis.Pass, obj *types.Func, body *ast.BlockStmt) *SetAccessFact {
	res := obj.Signature().Results()
	if res.Len() > 1 || res.Len() == 1 && !returnsBool(obj.Signature()) && !isErrorType(res.At(0).Type()) {
		return nil // neither an answer nor a bare write: no walk of its body
	}
	ops := rootedOps(pass.TypesInfo, obj, body)
	if len(ops) == 0 {
		return nil
	}
	var checks, writes []rootedOp
	for _, op := range ops {
		if op.root.kind != "recv" || op.check && op.write {
			return nil // another set, or a check-and-write: a SetHelperFact's business
		}
		if op.check {
			checks = append(checks, op)
		} else {
			writes = append(writes, op)
		}
	}
	sig := obj.Signature()
	fact := &SetAccessFact{}
	switch {
	case len(checks) > 0 && len(writes) == 0:
		if sig.Results().Len() != 1 || !returnsBool(sig) || !returnsFound(pass.TypesInfo, body, checks) {
			return nil
		}
		fact.What = checks[0].what
	case len(writes) > 0 && len(checks) == 0:
		for i := range sig.Results().Len() {
			if !isErrorType(sig.Results().At(i).Type()) {
				return nil
			}
		}
		fact.Write = true
		fact.What = writes[0].what
	default:
		return nil
	}
	fact.Lasting = fact.What == "go-cache" || hasPackageInstance(pass.Pkg, sig.Recv().Type())
	return fact
}

// returnsFound reports a body whose every return gives a variable the check assigned:
// found in _, found := c.cache.Get(id); return found.
func returnsFound(info *types.Info, body *ast.BlockStmt, checks []rootedOp) bool {
	found := map[types.Object]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 {
			return true
		}
		for _, c := range checks {
			if ast.Unparen(as.Rhs[0]) != c.node {
				continue
			}
			for _, lhs := range as.Lhs {
				if id, ok := lhs.(*ast.Ident); ok && id.Name != "_" {
					found[info.ObjectOf(id)] = true
				}
			}
		}
		return true
	})
	returns := ownReturns(body)
	for _, r := range returns {
		if len(r.Results) != 1 {
			return false
		}
		x, isID := ast.Unparen(r.Results[0]).(*ast.Ident)
		if !isID || !found[info.ObjectOf(x)] {
			return false
		}
	}
	return len(returns) > 0
}

// ownReturns returns the return statements of body, not those of the closures in it.
func ownReturns(body *ast.BlockStmt) []*ast.ReturnStmt {
	var out []*ast.ReturnStmt
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			out = append(out, n)
		}
		return true
	})
	return out
}

// hasPackageInstance reports a receiver type of which the package keeps an instance in a
// package-level variable (var svc *Service), so its fields live as long as the process.
func hasPackageInstance(pkg *types.Package, recv types.Type) bool {
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		v, ok := scope.Lookup(name).(*types.Var)
		if !ok {
			continue
		}
		t := v.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if types.Identical(t, recv) {
			return true
		}
	}
	return false
}

// implementationsAccess returns the fact of interface method m when the package's concrete
// types implementing the interface all do the same through m.
func implementationsAccess(pkg *types.Package, iface *types.Interface, m *types.Func, facts map[*types.Func]*SetAccessFact) *SetAccessFact {
	var out *SetAccessFact
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() || types.IsInterface(tn.Type()) {
			continue
		}
		for _, t := range []types.Type{tn.Type(), types.NewPointer(tn.Type())} {
			if !types.Implements(t, iface) {
				continue
			}
			obj, _, _ := types.LookupFieldOrMethod(t, true, pkg, m.Name())
			impl, _ := obj.(*types.Func)
			f := facts[impl]
			if impl == nil || f == nil || out != nil && out.Write != f.Write {
				return nil
			}
			if out == nil {
				c := *f
				out = &c
			} else {
				out.Lasting = out.Lasting && f.Lasting
			}
			break
		}
	}
	return out
}

// accessFact returns the SetAccessFact of callee, from this package or imported.
func (s *scanner) accessFact(callee *types.Func, local map[*types.Func]*SetAccessFact) *SetAccessFact {
	if f := local[callee]; f != nil {
		return f
	}
	if callee.Pkg() == nil || callee.Pkg() == s.pass.Pkg {
		return nil
	}
	var f SetAccessFact
	if s.pass.ImportObjectFact(callee, &f) {
		return &f
	}
	return nil
}

// findGates finds dedupe gates: a function answering bool whose body is
//
//	if X.Check(key) { return false }   // seen before: stop
//	X.Write(key)                        // first time: remember
//	return true                         // go on
//
// with Check and Write methods of X that only check and only write one set (facts on the
// concrete methods or on an interface's whose implementations in its package all are),
// a set that outlives a request (see SetAccessFact.Lasting, or X is a long-lived
// variable itself). The gate holds no effect: its callers (an action chain, a dispatcher
// behind an interface) run the work only on "true", out of the gate's sight. So it is
// reported only where the key names an incoming message or event (msgID, eventID,
// MessageId, update_id, …): a redelivered message, the case the gate exists for, comes
// back after a restart or to another replica; and only when the package performs an
// effect no promise covers, which the gate then stands in front of. A gate that sends
// SQL (a claim beside the set), that returns anything but the literal answers, or whose
// key is a user or a session (a rate limit, a cache of values) is not reported.
func (s *scanner) findGates(access map[*types.Func]*SetAccessFact) {
	if gatesOff {
		return
	}
	var effect *Site
	for _, fn := range s.res.Funcs {
		if fn.Test || fn.Covered || fn.Directive != nil {
			continue
		}
		if sites := unguardedSites(fn); len(sites) > 0 {
			effect = sites[0]
			break
		}
	}
	if effect == nil {
		return
	}
	already := map[*Func]bool{}
	for _, g := range s.res.LocalGuards {
		already[g.Func] = true
	}
	for _, fn := range s.res.Funcs {
		if fn.Test || fn.Covered || fn.Directive != nil || already[fn] || len(fn.SQL) > 0 {
			continue
		}
		sig := fn.Obj.Signature()
		if sig.Results().Len() != 1 || !returnsBool(sig) {
			continue
		}
		if g := s.gate(fn, access); g != nil {
			g.Site = effect
			if sib := s.siblingEffect(fn); sib != nil {
				g.Site = sib
			}
			s.res.LocalGuards = append(s.res.LocalGuards, g)
		}
	}
}

// siblingEffect returns the first unguarded effect in a method of the same name as fn's on
// another type (the later action of a chain of Execute methods), or nil.
func (s *scanner) siblingEffect(fn *Func) *Site {
	if fn.Obj.Signature().Recv() == nil {
		return nil
	}
	for _, other := range s.res.Funcs {
		if other == fn || other.Test || other.Covered || other.Directive != nil ||
			other.Obj.Signature().Recv() == nil || other.Obj.Name() != fn.Obj.Name() {
			continue
		}
		if sites := unguardedSites(other); len(sites) > 0 {
			return sites[0]
		}
	}
	return nil
}

// gate matches fn's body against the dedupe gate's shape.
func (s *scanner) gate(fn *Func, access map[*types.Func]*SetAccessFact) *LocalGuard {
	info := s.pass.TypesInfo
	list := fn.Decl.Body.List
	if len(ownReturns(fn.Decl.Body)) != 2 || len(list) < 3 || !returnsLiteral(info, list[len(list)-1], true) {
		return nil
	}
	for i, st := range list[:len(list)-1] {
		ifs, ok := st.(*ast.IfStmt)
		if !ok || ifs.Init != nil || ifs.Else != nil || len(ifs.Body.List) == 0 ||
			!returnsLiteral(info, ifs.Body.List[len(ifs.Body.List)-1], false) {
			continue
		}
		check, recv, key, cf := s.accessCall(ifs.Cond, access)
		if check == nil || cf.Write || !isEventID(key) {
			continue
		}
		for _, later := range list[i+1 : len(list)-1] {
			es, ok := later.(*ast.ExprStmt)
			if !ok {
				continue
			}
			write, wrecv, wkey, wf := s.accessCall(es.X, access)
			if write == nil || !wf.Write || types.ExprString(wrecv) != types.ExprString(recv) ||
				types.ExprString(wkey) != types.ExprString(key) {
				continue
			}
			desc := ""
			if d, ok := s.longLivedArg(fn, recv); ok {
				desc = d
			} else if cf.Lasting && wf.Lasting {
				desc = "the " + cf.What + " behind " + types.ExprString(recv)
			} else {
				return nil
			}
			return &LocalGuard{
				Func: fn, Check: check, Write: write.Pos(), Gate: true,
				Set: fmt.Sprintf("%s, checked through %s and written through %s,", desc,
					FuncName(typeutil.Callee(info, check).(*types.Func)), FuncName(typeutil.Callee(info, write).(*types.Func))),
				Key: types.ExprString(key),
			}
		}
	}
	return nil
}

// accessCall matches e against a call of a method with a SetAccessFact, taking one key,
// and returns the call, its receiver expression and key.
func (s *scanner) accessCall(e ast.Expr, access map[*types.Func]*SetAccessFact) (*ast.CallExpr, ast.Expr, ast.Expr, *SetAccessFact) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, nil, nil, nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil, nil, nil, nil
	}
	callee, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func)
	if !ok {
		return nil, nil, nil, nil
	}
	f := s.accessFact(callee.Origin(), access)
	if f == nil {
		return nil, nil, nil, nil
	}
	return call, sel.X, call.Args[0], f
}

// returnsLiteral reports a return statement of the one constant true (or false).
func returnsLiteral(info *types.Info, st ast.Stmt, want bool) bool {
	r, ok := st.(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return false
	}
	id, ok := ast.Unparen(r.Results[0]).(*ast.Ident)
	if !ok {
		return false
	}
	c, ok := info.Uses[id].(*types.Const)
	return ok && c.Parent() == types.Universe && c.Name() == fmt.Sprint(want)
}

// isEventID reports a key that names an incoming message or event by the last name in
// it: msgId, *a.info.msgId, ev.EventID, update.UpdateID, m.GetMessageId().
func isEventID(e ast.Expr) bool {
	var name string
	for name == "" {
		switch x := ast.Unparen(e).(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.CallExpr:
			if len(x.Args) != 0 {
				return false
			}
			e = x.Fun
		case *ast.SelectorExpr:
			name = x.Sel.Name
		case *ast.Ident:
			name = x.Name
		default:
			return false
		}
	}
	n := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	n = strings.TrimPrefix(n, "get")
	if !strings.HasSuffix(n, "id") {
		return false
	}
	n = strings.TrimSuffix(n, "id")
	for _, w := range []string{"msg", "message", "event", "update", "delivery", "notification"} {
		if strings.HasSuffix(n, w) {
			return true
		}
	}
	return false
}
