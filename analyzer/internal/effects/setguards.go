package effects

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// SetHelperFact marks a function that checks and writes a set and reports what it found
// as a bool: a dedupe set's Seen(key), a limiter's Allow(key), FirstTime(m, key). A call
// of it in a condition is a check-then-write of that set, made by the helper. Root says
// whose set: "recv" (the receiver's), "param" (the argument Param), "global" (a
// package-level variable of the helper's package, named Name).
type SetHelperFact struct {
	Root  string
	Param int
	Name  string
}

// AFact marks SetHelperFact as a fact.
func (*SetHelperFact) AFact() {}

func (f *SetHelperFact) String() string {
	if f.Root == "param" {
		return fmt.Sprintf("setHelper(param %d)", f.Param)
	}
	return "setHelper(" + f.Root + ")"
}

// setRoot says what a set expression is reached through.
type setRoot struct {
	kind  string     // "recv", "param", "global", "local"
	param int        // for "param"
	obj   *types.Var // the variable at the root
}

// rootedOp is one check or write of a set, wherever the set lives.
type rootedOp struct {
	root         setRoot
	node         ast.Node
	check, write bool
	value        *types.Var
	what         string // "map", "sync.Map" or "set"
}

// setHelpers finds the package's functions that check and write a set and return bool,
// and exports a SetHelperFact for those other packages can call. It runs on every
// package outside the Go root, also those that take the fast path: the helper package
// (a dedupe set, a limiter) usually imports nothing of interest.
func setHelpers(pass *analysis.Pass) map[*types.Func]*SetHelperFact {
	if len(pass.Files) == 0 || inGoroot(pass) {
		return nil
	}
	var out map[*types.Func]*SetHelperFact
	for _, f := range pass.Files {
		if strings.HasSuffix(pass.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			obj, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok || !returnsBool(obj.Signature()) {
				continue
			}
			root, ok := checkedAndWritten(rootedOps(pass.TypesInfo, obj, fd.Body))
			if !ok || root.kind == "local" {
				continue
			}
			fact := &SetHelperFact{Root: root.kind, Param: root.param}
			if root.kind == "global" {
				fact.Name = root.obj.Name()
			}
			if out == nil {
				out = map[*types.Func]*SetHelperFact{}
			}
			out[obj] = fact
			if obj.Exported() {
				pass.ExportObjectFact(obj, fact)
				pass.ExportPackageFact(new(PackageFact))
			}
		}
	}
	return out
}

func inGoroot(pass *analysis.Pass) bool {
	goroot := runtime.GOROOT()
	if goroot == "" {
		return false
	}
	name := pass.Fset.File(pass.Files[0].Pos()).Name()
	return strings.HasPrefix(name, filepath.Join(goroot, "src")+string(filepath.Separator))
}

// returnsBool reports a signature whose results are a bool, with at most an error
// beside it: the answer "seen before" or "allowed", and nothing the caller would use.
func returnsBool(sig *types.Signature) bool {
	res := sig.Results()
	hasBool := false
	for i := range res.Len() {
		t := res.At(i).Type()
		if b, ok := t.Underlying().(*types.Basic); ok && b.Kind() == types.Bool {
			hasBool = true
			continue
		}
		if isErrorType(t) {
			continue
		}
		return false
	}
	return hasBool
}

// checkedAndWritten returns the root of a set that ops both check and write.
func checkedAndWritten(ops []rootedOp) (setRoot, bool) {
	for _, c := range ops {
		if !c.check {
			continue
		}
		for _, w := range ops {
			if w.write && w.root == c.root {
				return c.root, true
			}
		}
	}
	return setRoot{}, false
}

// rootedOps lists the checks and writes of maps and sets in body, by what each set is
// reached through.
func rootedOps(info *types.Info, fn *types.Func, body *ast.BlockStmt) []rootedOp {
	var ops []rootedOp
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.IndexExpr:
			t := info.TypeOf(n.X)
			if t == nil {
				return true
			}
			if _, isMap := t.Underlying().(*types.Map); !isMap {
				return true
			}
			root, ok := rootOf(info, fn, n.X)
			if !ok {
				return true
			}
			if isAssigned(stack, n) {
				ops = append(ops, rootedOp{root: root, node: n, write: true, what: kindOf(t)})
			} else if inCondition(stack) {
				ops = append(ops, rootedOp{root: root, node: n, check: true, value: assignedVar(info, stack), what: kindOf(t)})
			}
		case *ast.CallExpr:
			sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr)
			if !ok {
				return true
			}
			t := info.TypeOf(sel.X)
			cache := isGoCache(t)
			if !isSetType(t) && !cache {
				return true
			}
			root, ok := rootOf(info, fn, sel.X)
			if !ok {
				return true
			}
			m := sel.Sel.Name
			op := rootedOp{root: root, node: n, check: checkMethods[m] && inCondition(stack), write: writeMethods[m], value: assignedVar(info, stack), what: kindOf(t)}
			if m == "LoadOrStore" {
				op.check = true
			}
			if cache {
				op.check, op.write = goCacheOp(info, n, m, inCondition(stack))
			}
			if op.check || op.write {
				ops = append(ops, op)
			}
		}
		return true
	})
	return ops
}

// rootOf finds the variable at the root of a set expression (s in s.seen, m in m[k],
// p in *p) and says what it is to fn.
func rootOf(info *types.Info, fn *types.Func, e ast.Expr) (setRoot, bool) {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			if sel, ok := info.Selections[x]; !ok || sel.Kind() != types.FieldVal {
				return setRoot{}, false
			}
			e = x.X
			continue
		case *ast.StarExpr:
			e = x.X
			continue
		case *ast.Ident:
			v, ok := info.Uses[x].(*types.Var)
			if !ok {
				return setRoot{}, false
			}
			sig := fn.Signature()
			if sig.Recv() != nil && v == sig.Recv() {
				return setRoot{kind: "recv", obj: v}, true
			}
			for i := range sig.Params().Len() {
				if sig.Params().At(i) == v {
					return setRoot{kind: "param", param: i, obj: v}, true
				}
			}
			if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
				return setRoot{kind: "global", obj: v}, true
			}
			return setRoot{kind: "local", obj: v}, true
		}
		return setRoot{}, false
	}
}

// assignedVar returns the variable the top of stack is assigned to as the first value.
func assignedVar(info *types.Info, stack []ast.Node) *types.Var {
	if len(stack) < 2 {
		return nil
	}
	as, ok := stack[len(stack)-2].(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 || as.Rhs[0] != stack[len(stack)-1] || len(as.Lhs) == 0 {
		return nil
	}
	id, ok := as.Lhs[0].(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := info.ObjectOf(id).(*types.Var)
	return v
}

// findHelperGuards finds process-local sets that guard an effect through a function:
//
//   - a set checked and written by a helper (a dedupe set's Seen, a limiter's Allow, here
//     or in another package through its SetHelperFact), called in a condition before an
//     unguarded effect, when the set lives as long as the process: a package-level
//     variable, a field reached through the receiver, a variable of func main;
//   - a function that checks and writes a set it is given as a parameter before an
//     unguarded effect, when a caller in the package passes a set that lives as long as
//     the process (main's sync.Map, passed by pointer to each handler). The finding is
//     at the check, naming the caller; a set made for one batch and passed in is not
//     reported.
//
// Functions that hold a promise, and those ONCE003 already reports a set in, are left
// alone. A set whose looked-up value the effect then uses is a cache, as in the direct
// case.
func (s *scanner) findHelperGuards(helpers map[*types.Func]*SetHelperFact) {
	already := map[*Func]bool{}
	for _, g := range s.res.LocalGuards {
		already[g.Func] = true
	}
	info := s.pass.TypesInfo
	for _, fn := range s.res.Funcs {
		if fn.Test || fn.Covered || fn.Directive != nil || already[fn] {
			continue
		}
		sites := unguardedSites(fn)
		if len(sites) == 0 {
			continue
		}
		if g := s.helperGuard(fn, sites, helpers); g != nil {
			s.res.LocalGuards = append(s.res.LocalGuards, g)
			already[fn] = true
			continue
		}
		// A parameter checked and written before an effect.
		ops := rootedOps(info, fn.Obj, fn.Decl.Body)
		for _, c := range ops {
			if !c.check || c.root.kind != "param" {
				continue
			}
			var write token.Pos
			for _, w := range ops {
				if w.write && w.root == c.root {
					write = w.node.Pos()
					break
				}
			}
			if !write.IsValid() {
				continue
			}
			site := firstSiteAfter(s, sites, c.node.Pos(), c.value)
			if site == nil {
				continue
			}
			// A handler's closure calling fn is a caller too: it passes main's set.
			for _, e := range append(fn.callers[:len(fn.callers):len(fn.callers)], fn.handedCallers...) {
				if c.root.param >= len(e.call.Args) || e.from.Covered || (e.guard != nil && e.guard.Kind != "request") {
					continue
				}
				desc, ok := s.longLivedArg(e.from, e.call.Args[c.root.param])
				if !ok {
					continue
				}
				s.res.LocalGuards = append(s.res.LocalGuards, &LocalGuard{
					Func: fn, Check: c.node, Write: write, Site: site,
					Set: fmt.Sprintf("%s parameter %s (%s, passed by %s)", c.what, c.root.obj.Name(), desc, FuncName(e.from.Obj)),
				})
				already[fn] = true
				break
			}
			if already[fn] {
				break
			}
		}
	}
}

func unguardedSites(fn *Func) []*Site {
	var out []*Site
	for _, site := range fn.Sites {
		if site.Unguarded() {
			out = append(out, site)
		}
	}
	return out
}

// firstSiteAfter returns the first site after pos that does not use value.
func firstSiteAfter(s *scanner, sites []*Site, pos token.Pos, value *types.Var) *Site {
	var first *Site
	for _, site := range sites {
		if site.Call.Pos() > pos && (first == nil || site.Call.Pos() < first.Call.Pos()) && !s.uses(site.Call, value) {
			first = site
		}
	}
	return first
}

// helperGuard finds, in fn, a call of a set helper in a condition, on a set that lives as
// long as the process, before an unguarded effect.
func (s *scanner) helperGuard(fn *Func, sites []*Site, helpers map[*types.Func]*SetHelperFact) *LocalGuard {
	info := s.pass.TypesInfo
	var found *LocalGuard
	var stack []ast.Node
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		call, ok := n.(*ast.CallExpr)
		if !ok || !inCondition(stack) {
			return true
		}
		callee, ok := typeutil.Callee(info, call).(*types.Func)
		if !ok {
			return true
		}
		callee = callee.Origin()
		fact := helpers[callee]
		if fact == nil && callee.Pkg() != s.pass.Pkg {
			var f SetHelperFact
			if s.pass.ImportObjectFact(callee, &f) {
				fact = &f
			}
		}
		if fact == nil {
			return true
		}
		var desc string
		switch fact.Root {
		case "global":
			desc = "package-level " + fact.Name + " of " + callee.Pkg().Name()
		case "recv":
			sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if desc, ok = s.longLivedArg(fn, sel.X); !ok {
				return true
			}
		case "param":
			if fact.Param >= len(call.Args) {
				return true
			}
			var ok bool
			if desc, ok = s.longLivedArg(fn, call.Args[fact.Param]); !ok {
				return true
			}
		default:
			return true
		}
		site := firstSiteAfter(s, sites, call.Pos(), assignedVar(info, stack))
		if site == nil {
			return true
		}
		found = &LocalGuard{
			Func: fn, Check: call, Write: call.Pos(), Site: site,
			Set: fmt.Sprintf("%s, through %s,", desc, FuncName(callee)),
		}
		return false
	})
	return found
}

// longLivedArg reports whether e, in fn, is a set that lives as long as the process, and
// names it: a package-level variable (or a field of one), a field reached through fn's
// receiver, or a variable of package main's func main (a handler's closure sees it).
func (s *scanner) longLivedArg(fn *Func, e ast.Expr) (string, bool) {
	info := s.pass.TypesInfo
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	root := e
	for {
		if sel, ok := ast.Unparen(root).(*ast.SelectorExpr); ok {
			if _, isField := info.Selections[sel]; !isField {
				break
			}
			root = sel.X
			continue
		}
		break
	}
	id, ok := ast.Unparen(root).(*ast.Ident)
	if !ok {
		return "", false
	}
	v, ok := info.Uses[id].(*types.Var)
	if !ok {
		return "", false
	}
	what := kindOf(info.TypeOf(e))
	name := types.ExprString(e)
	switch {
	case v.Pkg() == s.pass.Pkg && v.Parent() == s.pass.Pkg.Scope():
		return "package-level " + what + " " + name, true
	case fn.Obj.Signature().Recv() != nil && v == fn.Obj.Signature().Recv() && root != e:
		return what + " field " + name, true
	case s.pass.Pkg.Name() == "main" && fn.Obj.Name() == "main" && fn.Obj.Signature().Recv() == nil &&
		v.Pos() > fn.Decl.Body.Pos() && v.Pos() < fn.Decl.Body.End() && !inLoop(fn.Decl.Body, v.Pos()):
		return "main's " + what + " " + name + ", which lasts as long as the process", true
	}
	return "", false
}

// inLoop reports whether pos lies in the body of a for or range loop within body.
func inLoop(body *ast.BlockStmt, pos token.Pos) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found || n == nil || pos < n.Pos() || pos >= n.End() {
			return false
		}
		switch n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			found = true
		case *ast.FuncLit:
			found = true // a closure's own variable lives per call
		}
		return !found
	})
	return found
}
