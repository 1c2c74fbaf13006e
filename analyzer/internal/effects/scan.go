package effects

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	catalog "github.com/oncekit/once/analyzer/internal/effects/oldcatalog"
	"github.com/oncekit/once/analyzer/internal/sqltext"
	"github.com/oncekit/once/internal/directive"
)

type scanner struct {
	pass *analysis.Pass
	cat  *catalog.Catalog
	res  *Result

	methods map[string][]*Func  // the package's concrete methods by name, for interface calls
	handed  int                 // closures handed out that enclose the body being scanned
	latches map[*types.Func]int // the package's latch functions (see LatchFact)
	// latchKeySet: the index keys of the latches known here (see latchKeys).
	latchKeySet map[string]bool
	uniques     *uniqueKeys // the module's unique constraints, read on first use
	// implFacts and modImports serve implementationFact.
	implFacts  map[*types.Func]*EffectFact
	modImports []*types.Package
	// classes holds the effect classes each function reaches (see inertPurposeCalls).
	classes map[*Func]map[string]bool
}

// collect builds the function table, the effect sites and the in-package call graph.
func (s *scanner) collect() {
	pass := s.pass
	byDecl := map[*ast.FuncDecl]*directive.Directive{}
	for _, d := range s.res.Directives {
		byDecl[d.Func] = d
	}
	for _, f := range pass.Files {
		name := pass.Fset.File(f.Pos()).Name()
		test := strings.HasSuffix(name, "_test.go")
		gen := ast.IsGenerated(f)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			obj, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			fn := &Func{Obj: obj, Decl: fd, File: f, Test: test, Generated: gen, Directive: byDecl[fd]}
			s.res.Funcs = append(s.res.Funcs, fn)
			s.res.ByObj[obj] = fn
		}
	}
	s.findLatches()
	for _, fn := range s.res.Funcs {
		s.scanBody(fn)
	}
	// Package-level initialisers can call guarded functions too (var x = F(...)).
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok {
				ast.Inspect(gd, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						s.noteGuardedCall(nil, f, call)
					}
					return true
				})
			}
		}
	}
}

// scanBody records fn's effect sites, in-package calls and guarded calls.
func (s *scanner) scanBody(fn *Func) {
	info := s.pass.TypesInfo
	type open struct {
		guard   *Guard
		closure ast.Node
	}
	var guards []open // runtime guards whose closures enclose the current node
	var handed []ast.Node
	var stack []ast.Node
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if n == nil {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(guards) > 0 && guards[len(guards)-1].closure == top {
				guards = guards[:len(guards)-1]
			}
			if len(handed) > 0 && handed[len(handed)-1] == top {
				handed = handed[:len(handed)-1]
				s.handed--
			}
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.FuncLit:
			// A closure passed to a runtime guard runs under the guard's promise; one
			// handed out otherwise (a route's handler, a job given to a queue, a
			// returned handler) runs elsewhere, later: the functions it calls are entry
			// points, not callees of this one. A wait group's or a once's closure runs
			// as part of this function (see inlineRunners).
			if len(stack) >= 2 {
				switch p := stack[len(stack)-2].(type) {
				case *ast.CallExpr:
					if p.Fun != n {
						if kind, ok := s.runtimeGuardKind(p); ok {
							guards = append(guards, open{&Guard{Call: p, Kind: kind}, n})
						} else if !s.runsInline(p) {
							handed = append(handed, n)
							s.handed++
						}
					}
				case *ast.ReturnStmt, *ast.KeyValueExpr, *ast.CompositeLit:
					handed = append(handed, n)
					s.handed++
				}
			}
		case *ast.Ident:
			// A function used other than by calling it is an entry point.
			if obj, ok := info.Uses[n].(*types.Func); ok && obj.Pkg() == s.pass.Pkg {
				if !isCallee(stack, n) {
					if callee := s.res.ByObj[obj.Origin()]; callee != nil {
						callee.ValueRef = true
					}
				}
			}
		case *ast.CallExpr:
			var g *Guard
			if len(guards) > 0 {
				g = guards[len(guards)-1].guard
			} else if ifs := fn.underLatch(n.Pos()); ifs != nil {
				// A hand-written latch was taken: a repeat stops at its check.
				g = &Guard{Kind: LatchGuard, Check: ifs}
			}
			s.noteCall(fn, n, g)
		}
		return true
	})
}

// isCallee reports whether id (the top of stack) names the function of a call.
func isCallee(stack []ast.Node, id *ast.Ident) bool {
	i := len(stack) - 2
	var child ast.Node = id
	if i >= 0 {
		if sel, ok := stack[i].(*ast.SelectorExpr); ok && sel.Sel == id {
			child = sel
			i--
		}
	}
	for i >= 0 {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
			child = p
			i--
			continue
		case *ast.IndexExpr: // generic instantiation F[T](...)
			if p.X == child {
				child = p
				i--
				continue
			}
		case *ast.IndexListExpr:
			if p.X == child {
				child = p
				i--
				continue
			}
		case *ast.CallExpr:
			return p.Fun == child
		}
		return false
	}
	return false
}

// noteCall classifies one call in fn's body.
func (s *scanner) noteCall(fn *Func, call *ast.CallExpr, g *Guard) {
	callee, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func)
	if !ok {
		return
	}
	callee = callee.Origin()
	s.noteGuardedCall(fn, fn.File, call)
	if s.cat.IsRead(callee.FullName()) {
		return
	}
	if e, ok := s.cat.Effect(callee.FullName()); ok {
		s.noteEffect(fn, call, callee, e, g)
		return
	}
	if isAbstract(callee) {
		impls := s.implementations(callee)
		for _, to := range impls {
			s.addEdge(fn, call, to, g)
		}
		if len(impls) > 0 || callee.Pkg() == s.pass.Pkg {
			return
		}
		// An interface of another package of the module: its implementations there
		// export their effect on the interface's method.
	}
	if callee.Pkg() == s.pass.Pkg {
		if to := s.res.ByObj[callee]; to != nil {
			s.addEdge(fn, call, to, g)
		}
		return
	}
	var fact EffectFact
	if !s.pass.ImportObjectFact(callee, &fact) && !(isAbstract(callee) && s.implementationFact(callee, &fact)) {
		return
	}
	site := &Site{
		Call: call, Func: fn, Name: DisplayName(s.pass.TypesInfo, call, callee), Via: fact.Via,
		What: fact.Effect, Class: fact.Class, Guard: g, Callee: callee, Chain: fact.Chain,
		Reported: fact.Reported,
	}
	if fact.Cond {
		s.noteConditional(fn, call, site, fact.Param, fact.Methods, fact.URLArg)
		return
	}
	fn.Sites = append(fn.Sites, site)
}

// purposeCall reports whether a call from fn to callee, whose effects are raw HTTP
// requests, serves fn's purpose as its name gives it (see catalog.CheckName): an
// unsubscribe's helpers unsubscribe, a getX's helpers read. A callee named for a write
// (createCustomer, notifyFailure, capturePayment) does what its own name says. Another
// package's function counts only as a transport given the method (its fact's Cond):
// a plain fact names one effect's class, and may hide others.
func (s *scanner) purposeCall(fn *Func, callee *types.Func) bool {
	return s.cat.CheckName(fn.Obj.Name()) && !catalog.WriteName(callee.Name())
}

// inertPurposeCalls makes inert the calls that serve a purpose with no lasting effect.
// A function named for one (a read, a logout, an unsubscribe: catalog.CheckName) makes
// its raw HTTP requests for it, and so do the functions of the package it calls whose
// every effect is a raw HTTP request, unless named for a write: those calls are inert
// (see purposeCall). A function of the package that only such calls reach (unexported,
// never handed out) serves the same purpose: its raw requests are no effect, and its own
// calls are judged the same way.
func (s *scanner) inertPurposeCalls() {
	classes := map[*Func]map[string]bool{}
	add := func(fn *Func, c string) bool {
		if classes[fn] == nil {
			classes[fn] = map[string]bool{}
		}
		if classes[fn][c] {
			return false
		}
		classes[fn][c] = true
		return true
	}
	for _, fn := range s.res.Funcs {
		for _, site := range fn.Sites {
			if site.Unguarded() {
				add(fn, site.Class)
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range s.res.Funcs {
			for _, e := range fn.calls {
				if e.inert {
					continue
				}
				for c := range classes[e.to] {
					if add(fn, c) {
						changed = true
					}
				}
			}
		}
	}
	s.classes = classes
	purpose := map[*Func]bool{}
	for _, fn := range s.res.Funcs {
		purpose[fn] = !fn.Test && s.cat.CheckName(fn.Obj.Name())
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range s.res.Funcs {
			if !purpose[fn] {
				continue
			}
			for _, e := range fn.calls {
				if c := classes[e.to]; !e.inert && len(c) == 1 && c[catalog.HTTP] && s.purposeCall(fn, e.to.Obj) {
					e.inert, e.purpose = true, true
					changed = true
				}
			}
		}
		for _, fn := range s.res.Funcs {
			if purpose[fn] || fn.Test || exportedAPI(fn.Obj) || fn.ValueRef || len(fn.handedCallers) > 0 || len(fn.callers) == 0 {
				continue
			}
			served := true
			for _, e := range fn.callers {
				served = served && e.purpose
			}
			if !served {
				continue
			}
			purpose[fn] = true
			changed = true
			kept := fn.Sites[:0]
			for _, site := range fn.Sites {
				if !site.Unguarded() || site.Class != catalog.HTTP {
					kept = append(kept, site)
				}
			}
			fn.Sites = kept
		}
	}
}

// noteEffect records a call of a catalogued effect. An HTTP request is an effect only
// when its method is one of the entry's (traced through the request value; a request
// whose method comes from a parameter makes the function's callers decide), and only
// when its URL is not one the catalogue lists as a read.
func (s *scanner) noteEffect(fn *Func, call *ast.CallExpr, callee *types.Func, e *catalog.Effect, g *Guard) {
	t := tracer{pass: s.pass, fn: fn.Decl}
	param := -1
	if r := e.Request; r != nil {
		if r.Arg >= len(call.Args) {
			return
		}
		m := t.methodOf(call.Args[r.Arg], call.Pos(), 0)
		switch {
		case m.name != "":
			if !slices.Contains(r.Methods, m.name) {
				return
			}
		case m.param >= 0:
			param = m.param
		default:
			return // built where it cannot be seen: a request is no effect unless shown one
		}
		if s.readURL(t, call.Args[r.Arg], call.Pos()) {
			return
		}
	}
	if e.URL != nil && *e.URL < len(call.Args) {
		if s.readURL(t, call.Args[*e.URL], call.Pos()) {
			return
		}
	}
	if e.Class == catalog.HTTP && s.readByName(fn) {
		return
	}
	name := DisplayName(s.pass.TypesInfo, call, callee)
	site := &Site{
		Call: call, Func: fn, Name: name, Effect: e, Via: name, What: e.Effect, Class: e.Class,
		Deep: call.Pos(), Keyed: keyCarried(s.pass, fn.Decl.Body, call, e), Guard: g, Callee: callee,
	}
	// A helper of the package that sends a request to the URL it is given (postJSON(url,
	// body)) is a transport: where the request goes, and so whether it is a read, is its
	// callers' decision. Its effect depends on their arguments as a method parameter's
	// does. One that repeats the request in a loop decides the repeat itself.
	if param < 0 && !exportedAPI(fn.Obj) && !repeated(fn.Decl.Body, call) {
		urlArg := -1
		switch {
		case e.Request != nil:
			urlArg = e.Request.Arg
		case e.URL != nil:
			urlArg = *e.URL
		}
		if urlArg >= 0 && urlArg < len(call.Args) {
			if p := t.givenURL(call.Args[urlArg], call.Pos()); p >= 0 && !site.Keyed && site.Guard == nil {
				site.Param, site.byURL = p, true
				fn.cond = append(fn.cond, site)
				return
			}
		}
	}
	if param >= 0 {
		if !site.Keyed && site.Guard == nil {
			site.Param, site.Methods = param, e.Request.Methods
			if p := t.givenURL(call.Args[e.Request.Arg], call.Pos()); p >= 0 {
				site.URLArg = p + 1
			}
			fn.cond = append(fn.cond, site)
		}
		return
	}
	fn.Sites = append(fn.Sites, site)
}

// readByName reports whether fn's raw HTTP requests are reads by what fn holds or is
// named: a marker such as "grant_type", or a name the catalogue lists (verifyCaptcha,
// getDepartments, revokeToken).
func (s *scanner) readByName(fn *Func) bool {
	return s.marked(fn) || s.cat.CheckName(fn.Obj.Name())
}

// condURLArg returns the URL parameter (one more than its index) shared by all of fn's
// conditional sites, or 0: a caller's read URL makes none of them an effect only when
// every one of them is sent to it.
func condURLArg(fn *Func) int {
	if len(fn.cond) == 0 {
		return 0
	}
	u := fn.cond[0].URLArg
	for _, c := range fn.cond[1:] {
		if c.URLArg != u {
			return 0
		}
	}
	return u
}

// givenURL returns the parameter of the function being traced that says where the request
// built from e goes: its URL is the parameter, with no path of the function's own around it
// (see ownPath). -1 when there is none.
func (t tracer) givenURL(e ast.Expr, pos token.Pos) int {
	if p := t.urlParam(e, pos, 0); p >= 0 && !ownPath(t.urlParts(e, pos, 0)) {
		return p
	}
	return -1
}

// readURL reports whether the URL e builds is one the catalogue lists as a read.
func (s *scanner) readURL(t tracer, e ast.Expr, pos token.Pos) bool {
	parts, lead := t.urlParts(e, pos, 0)
	return s.cat.ReadURL(parts, lead)
}

// ownPath reports whether the constant parts of a URL name a path of their own
// (c.base+"/orders/"+id): the function knows the endpoint, and a parameter only names the
// resource. Separators alone (fmt.Sprintf("%s/%s", base, path)) name none.
func ownPath(parts []string, _ bool) bool {
	for _, p := range parts {
		if strings.Trim(p, "/?&= \t") != "" {
			return true
		}
	}
	return false
}

// repeats reports whether fn makes one of its conditional requests in a loop: it decides
// the repeat (a retry loop), so it is no mere transport.
func repeats(fn *Func) bool {
	for _, c := range fn.cond {
		if repeated(fn.Decl.Body, c.Call) {
			return true
		}
	}
	return false
}

// repeated reports whether call is made inside a for or range statement of body
// (outside closures): the function repeats it.
func repeated(body *ast.BlockStmt, call *ast.CallExpr) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found || n == nil || call.Pos() < n.Pos() || call.Pos() >= n.End() {
			return false
		}
		switch n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			found = true
		case *ast.FuncLit:
			return false
		}
		return !found
	})
	return found
}

// marked reports whether fn holds a string constant the catalogue says marks its
// requests as reads (an OAuth token request's "grant_type").
func (s *scanner) marked(fn *Func) bool {
	found := false
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if v, err := strconv.Unquote(lit.Value); err == nil && s.cat.ReadMarker(v) {
				found = true
			}
		}
		return !found
	})
	return found
}

// noteConditional records a call of a function that performs an effect only for some
// values of its parameter param (the HTTP method, or the request): the call is an effect
// when its argument is one of methods, and makes fn conditional in turn when the argument
// is fn's own parameter.
func (s *scanner) noteConditional(fn *Func, call *ast.CallExpr, site *Site, param int, methods []string, urlArg int) {
	if param >= len(call.Args) {
		return
	}
	if urlArg > len(call.Args) {
		urlArg = 0
	}
	t := tracer{pass: s.pass, fn: fn.Decl}
	m := t.methodOf(call.Args[param], call.Pos(), 0)
	switch {
	case m.name != "" && slices.Contains(methods, m.name):
		if site.Class == catalog.HTTP && s.purposeCall(fn, site.Callee) {
			return
		}
		if urlArg > 0 {
			if s.readURL(t, call.Args[urlArg-1], call.Pos()) {
				return // a transport of another package sent to a read
			}
		}
		fn.Sites = append(fn.Sites, site)
	case m.name == "" && m.param >= 0:
		c := *site
		c.Param, c.Methods, c.URLArg = m.param, methods, 0
		if urlArg > 0 {
			if p := t.givenURL(call.Args[urlArg-1], call.Pos()); p >= 0 {
				c.URLArg = p + 1
			}
		}
		fn.cond = append(fn.cond, &c)
	}
}

// resolveConditional settles the calls of the package's functions whose effect depends
// on a parameter (the HTTP method, or the request). A call passing a state-changing
// method activates the callee: its effect is then a plain effect, reported by the usual
// rules (at the helper itself when nothing above it holds a promise). A call passing a
// GET, or a value that cannot be seen, is inert: it reaches no effect. A call passing its
// own parameter makes the caller conditional in turn, and is activated with it.
func (s *scanner) resolveConditional() {
	done := map[*edge]bool{}
	for changed := true; changed; {
		changed = false
		for _, fn := range s.res.Funcs {
			for _, e := range fn.calls {
				if done[e] || len(e.to.cond) == 0 {
					continue
				}
				done[e] = true
				changed = true
				c := e.to.cond[0]
				if c.Param >= len(e.call.Args) || c.Class == catalog.HTTP && s.readByName(fn) {
					e.inert = true // a read: the caller is named for one
					continue
				}
				t := tracer{pass: s.pass, fn: fn.Decl}
				if c.byURL {
					// A transport's request goes where its caller says: a read URL is a
					// read, any other an effect this caller decides.
					if s.readURL(t, e.call.Args[c.Param], e.call.Pos()) {
						e.inert = true
						continue
					}
					e.to.activators = appendOnce(e.to.activators, fn)
					s.activate(e.to)
					continue
				}
				m := t.methodOf(e.call.Args[c.Param], e.call.Pos(), 0)
				var urlArg ast.Expr
				if u := condURLArg(e.to); u > 0 && u <= len(e.call.Args) {
					urlArg = e.call.Args[u-1]
				}
				switch {
				case m.name != "" && slices.Contains(c.Methods, m.name):
					if urlArg != nil {
						if s.readURL(t, urlArg, e.call.Pos()) {
							e.inert = true // sent to a read
							continue
						}
					}
					e.to.activators = appendOnce(e.to.activators, fn)
					s.activate(e.to)
				case m.name == "" && m.param >= 0:
					e.inert, e.fromCond = true, true // until fn is activated
					name := e.to.Obj
					if static, ok := typeutil.Callee(s.pass.TypesInfo, e.call).(*types.Func); ok {
						name = static.Origin()
					}
					up := 0
					if urlArg != nil {
						if p := t.givenURL(urlArg, e.call.Pos()); p >= 0 {
							up = p + 1
						}
					}
					fn.cond = append(fn.cond, &Site{
						Call: e.call, Func: fn, Name: DisplayName(s.pass.TypesInfo, e.call, name), Via: c.Via,
						What: c.What, Class: c.Class, Deep: c.Deep, Guard: e.guard, Callee: e.to.Obj,
						Chain: below(c), Param: m.param, Methods: c.Methods, URLArg: up, pending: e,
					})
				default:
					e.inert = true
				}
			}
		}
	}
}

// appendOnce appends fn to fns unless it is there.
func appendOnce(fns []*Func, fn *Func) []*Func {
	if slices.Contains(fns, fn) {
		return fns
	}
	return append(fns, fn)
}

// markTransports marks the transports judged at their callers: an activated helper of
// the package (not its API, not handed out) that one function activates sends what
// that function decides, and is that function's effect. One that several functions
// activate is judged where it is, once, rather than at each.
func (s *scanner) markTransports() {
	// A helper sending to the URL it is given that no call of the package describes (it
	// is handed out as a value, or nothing here calls it) sends what it is given: an
	// effect where it is.
	for _, fn := range s.res.Funcs {
		if len(fn.cond) > 0 && fn.cond[0].byURL && !fn.activated && (fn.ValueRef || len(fn.handedCallers) > 0 || len(fn.callers) == 0) {
			s.activate(fn)
		}
	}
	for _, fn := range s.res.Funcs {
		if fn.activated && len(fn.activators) == 1 && fn.activators[0] != fn && !exportedAPI(fn.Obj) && !fn.ValueRef && !ownEffect(fn) && !repeats(fn) {
			fn.transport = true
		}
	}
}

// activate makes fn's conditional effects plain ones.
func (s *scanner) activate(fn *Func) {
	if fn.activated {
		return
	}
	fn.activated = true
	for _, c := range fn.cond {
		if c.pending != nil {
			c.pending.inert = false
			c.pending.to.activators = appendOnce(c.pending.to.activators, fn)
			s.activate(c.pending.to)
			continue
		}
		c.fromCond = true
		fn.Sites = append(fn.Sites, c)
	}
}

// addEdge records an in-package call from fn to to.
func (s *scanner) addEdge(fn *Func, call *ast.CallExpr, to *Func, g *Guard) {
	if to == fn {
		return
	}
	if s.handed > 0 && g == nil {
		to.ValueRef = true
		if !fn.Test {
			to.handedCallers = append(to.handedCallers, &edge{call: call, from: fn, to: to})
		}
		return
	}
	e := &edge{call: call, from: fn, to: to, guard: g}
	fn.calls = append(fn.calls, e)
	if !fn.Test {
		to.callers = append(to.callers, e)
	}
}

// isAbstract reports an interface method: its call dispatches to an implementation.
func isAbstract(fn *types.Func) bool {
	recv := fn.Signature().Recv()
	return recv != nil && types.IsInterface(recv.Type())
}

// implementations returns the package's methods (outside test files) that a call of the
// interface method m may dispatch to: the adapter behind an interface (a Mailer whose
// SES implementation sends the email) is called wherever the interface's method is. So a
// call made under a promise covers the adapter, and one made without is where its effect
// is reported.
func (s *scanner) implementations(m *types.Func) []*Func {
	if s.methods == nil {
		s.methods = map[string][]*Func{}
		for _, fn := range s.res.Funcs {
			if fn.Obj.Signature().Recv() != nil && !fn.Test {
				s.methods[fn.Obj.Name()] = append(s.methods[fn.Obj.Name()], fn)
			}
		}
	}
	iface, ok := m.Signature().Recv().Type().Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var out []*Func
	for _, fn := range s.methods[m.Name()] {
		t := fn.Obj.Signature().Recv().Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		named, ok := t.(*types.Named)
		if !ok || named.TypeParams().Len() > 0 || types.IsInterface(named) {
			continue
		}
		if types.Implements(types.NewPointer(named), iface) {
			out = append(out, fn)
		}
	}
	return out
}

// noteGuardedCall records a call of a function declared with a directive.
func (s *scanner) noteGuardedCall(fn *Func, file *ast.File, call *ast.CallExpr) {
	callee, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func)
	if !ok {
		return
	}
	callee = callee.Origin()
	var fact *GuardedFact
	if callee.Pkg() == s.pass.Pkg {
		if to := s.res.ByObj[callee]; to != nil && to.Directive != nil {
			fact = guardedFact(to)
		}
	} else {
		var f GuardedFact
		if s.pass.ImportObjectFact(callee, &f) {
			fact = &f
		}
	}
	if fact != nil {
		s.res.GuardedCalls = append(s.res.GuardedCalls, &GuardedCall{Call: call, Func: fn, Callee: callee, Fact: fact, File: file})
	}
}

func guardedFact(fn *Func) *GuardedFact {
	return &GuardedFact{Kind: string(fn.Directive.Kind), Wrapper: directive.WrapperName(fn.Obj.Name())}
}

// runtimeGuardKind reports whether call is a method of one of the runtime's guard types
// (once.Forever[T].Do, once.ForeverFunc.Do, ...), and its kind.
func (s *scanner) runtimeGuardKind(call *ast.CallExpr) (string, bool) {
	callee, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func)
	if !ok || callee.Pkg() == nil || callee.Pkg().Path() != RuntimePath {
		return "", false
	}
	sig := callee.Signature()
	if sig.Recv() == nil {
		return "", false
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok {
		return "", false
	}
	// A guard for a function that returns only an error (once.ForeverFunc) is of its kind.
	return strings.ToLower(strings.TrimSuffix(named.Obj().Name(), "Func")), true
}

// propagate computes which functions are covered by a promise, which perform an
// unguarded effect, and where each such effect is reported.
func (s *scanner) propagate() {
	funcs := s.res.Funcs
	s.inertPurposeCalls()
	s.deadDispatch()
	// Effectful: a least fixpoint over the call graph.
	for _, fn := range funcs {
		for _, site := range fn.Sites {
			if site.Unguarded() && fn.Directive == nil && fn.via == nil {
				fn.via = site
				fn.Effectful = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range funcs {
			for _, e := range fn.calls {
				if !e.active && !e.inert && e.to.Effectful {
					e.active = true
					changed = true
					s.addCallSite(e)
				}
			}
			if !fn.Effectful && fn.Directive == nil {
				for _, site := range fn.Sites {
					if site.Unguarded() {
						fn.Effectful, fn.via = true, site
						changed = true
						break
					}
				}
			}
		}
	}
	// Other packages of the module may call the package's exported functions: read
	// which do, and whether under a promise.
	ext := map[*Func][2]bool{} // called elsewhere in the module; every such call promised
	if inModule(s.pass) {
		var idx *callerIndex
		for _, fn := range funcs {
			if fn.Test || !exportedAPI(fn.Obj) || !(fn.Effectful || len(fn.cond) > 0 || reaches(fn)) {
				continue
			}
			if idx == nil {
				if idx = moduleCallers(s.pass); idx == nil {
					break
				}
			}
			calls := idx.external(s.pass.Pkg.Path(), fn)
			all := true
			for _, c := range calls {
				switch {
				case idx.isPromised(c):
					fn.promised = true
				case c.latched(s.latchKeys()):
					// Made once a hand-written latch was taken: covered, like a call
					// under a promise, without moving the judgement of other calls.
				default:
					all = false
				}
				if !fn.shared {
					fn.shared = len(fn.callers) > 0 || c.pkg != calls[0].pkg
				}
			}
			ext[fn] = [2]bool{len(calls) > 0, len(calls) > 0 && all}
		}
	}
	// Covered: a function with a directive, or one called only under promises.
	for _, fn := range funcs {
		// A function named for a deliberate repeat (reOCRPage, resendInvite) declares by
		// its name that doing it again is its job, and a handler relaying its request's
		// question to a model keeps nothing to repeat (see relay): neither is judged.
		fn.Covered = fn.Directive != nil || catalog.RedoName(fn.Obj.Name()) || s.relay(fn, ext[fn][0])
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range funcs {
			e := ext[fn]
			if fn.Covered || fn.ValueRef || (len(fn.callers) == 0 && !e[0]) || (e[0] && !e[1]) {
				continue
			}
			all := true
			for _, e := range fn.callers {
				if !e.from.Covered && (e.guard == nil || e.guard.Kind == string(directive.Request)) {
					all = false
					break
				}
			}
			if all {
				fn.Covered = true
				changed = true
			}
		}
	}
	// Promised: a promise is held above some call of the function, here or elsewhere in
	// the module. Its unguarded effect is then the fault of the callers that hold none,
	// and is reported at their calls; a function no promise is held above is where its
	// effect is reported, once, however many callers it has. A hand-written latch is a
	// promise of one caller's making, not a declared one: it covers a function all of
	// whose calls it precedes, but does not move the judgement of one called elsewhere
	// without it to those other callers.
	for _, fn := range funcs {
		fn.promised = fn.promised || fn.Directive != nil
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range funcs {
			for _, e := range fn.callers {
				if !fn.promised && (e.from.promised || (e.guard != nil && e.guard.Kind != string(directive.Request) && e.guard.Kind != LatchGuard)) {
					fn.promised = true
					changed = true
				}
			}
		}
	}
	// Adapters: two or more implementations of one interface method that perform an
	// effect are ports of one decision (an SMS provider's Twilio and Vonage adapters),
	// made where the interface is called; they are judged there, like a shared service.
	// An implementation whose effects are all reported in another package (the model
	// client's own retry loop) decides none there, and is no port.
	for _, m := range s.interfaceMethods() {
		var effectful []*Func
		for _, impl := range s.implementations(m) {
			if impl.Effectful && s.decidesAny(impl) {
				effectful = append(effectful, impl)
			}
		}
		if len(effectful) >= 2 {
			for _, impl := range effectful {
				impl.shared = true
			}
		}
	}
	// Adapters of a port declared elsewhere: an exported method that implements an
	// interface of another package of the module (a template mailer behind the mailer
	// package's Mailer), called from other packages and not here, is reached through the
	// port. The code calling the port decides whether to send; it is judged there.
	for _, fn := range funcs {
		if !fn.Test && fn.Effectful && exportedAPI(fn.Obj) && !fn.ValueRef && len(fn.callers) == 0 && ext[fn][0] && s.decidesAny(fn) && s.foreignPort(fn.Obj) {
			fn.shared = true
		}
	}
	// Deferred: judged at callers. A function promised from above or shared is; so is
	// one called only by deferred functions of the package (the helper of a shared
	// service), unless it is handed out as a value or called from elsewhere.
	// Wrappers: an exported function of the module's own client (a model client's
	// StreamChat) that makes its effect unconditionally with what it is given is called
	// by the code that decides; it is judged at its callers, in the module, like a
	// shared service.
	for _, fn := range funcs {
		if !fn.Test && fn.Effectful && exportedAPI(fn.Obj) && !fn.ValueRef && (len(fn.callers) > 0 || ext[fn][0]) && (s.wrapper(fn) || s.sendsGiven(fn)) {
			fn.shared = true
		}
	}
	for _, fn := range funcs {
		fn.deferred = fn.promised || fn.shared || fn.transport
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range funcs {
			if fn.deferred || fn.ValueRef || len(fn.callers) == 0 || ext[fn][0] {
				continue
			}
			all := true
			for _, e := range fn.callers {
				if !e.from.deferred {
					all = false
					break
				}
			}
			if all {
				fn.deferred = true
				changed = true
			}
		}
	}
	// Absorbed: a function whose one caller decides an effect of its own, and is where
	// that effect is reported, is part of that caller's decision (the suggestions call of
	// the one handler that also asks for the answer): one promise on the caller covers
	// both, so it is reported there, once, not again at the helper.
	for changed := true; changed; {
		changed = false
		for _, fn := range funcs {
			// A helper that reads or writes the database decides by state of its own (an
			// alert sent once a day, behind its own row): its effect is its own finding.
			if !fn.Effectful || fn.Covered || fn.Test || fn.deferred || fn.ValueRef || len(fn.handedCallers) > 0 || ext[fn][0] || s.sendsSQL(fn) {
				continue
			}
			g := soleCaller(fn)
			if g == nil || g.Test || g.Covered || !(g.absorbed || !g.deferred) || !s.decidesOwn(g) {
				continue
			}
			fn.deferred, fn.absorbed = true, true
			changed = true
		}
	}
	here := func(fn *Func) bool { return fn.Effectful && !fn.Covered && !fn.Test && !fn.deferred }
	// Settled: every effect the function reaches is already reported further down (at a
	// function of the package, or of another package, judged where it is defined): its
	// callers report nothing more.
	for changed := true; changed; {
		changed = false
		for _, fn := range funcs {
			if fn.Settled || !fn.Effectful {
				continue
			}
			all := true
			for _, site := range fn.Sites {
				if !site.decides() {
					continue
				}
				if c := s.res.ByObj[site.Callee]; site.Effect == nil && c != nil && (here(c) || c.Settled) {
					continue
				}
				all = false
				break
			}
			if all {
				fn.Settled = true
				changed = true
			}
		}
	}
	for _, fn := range funcs {
		fn.Reports = here(fn) && !fn.Settled
	}
	// Name what is left: a function's finding, and the fact its callers read, name an
	// effect no function further down reports, not the first one it reaches.
	seen := map[*Func]bool{}
	for _, fn := range funcs {
		s.nameUnreported(fn, seen)
	}
}

// reportedBelow reports whether site's effect is reported further down: in another
// package (the fact's Reported), or at a function of the package it calls.
func (s *scanner) reportedBelow(site *Site) bool {
	if site.Reported {
		return true
	}
	c := s.res.ByObj[site.Callee]
	return site.Effect == nil && c != nil && (c.Reports || c.Settled)
}

// nameUnreported makes fn's via, once its callees' are, a site whose effect nothing
// further down reports when it has one, and refreshes its sites that call functions of
// the package with what they now name. A function reaching an email reported below and
// a second effect reported nowhere else is reported for the second, and says so.
func (s *scanner) nameUnreported(fn *Func, seen map[*Func]bool) {
	if seen[fn] {
		return
	}
	seen[fn] = true
	for _, site := range fn.Sites {
		if site.Effect != nil {
			continue
		}
		c := s.res.ByObj[site.Callee]
		if c == nil || c == fn {
			continue
		}
		s.nameUnreported(c, seen)
		if v := c.via; v != nil && !site.Reported {
			site.Via, site.What, site.Class, site.Deep, site.Chain = v.Via, v.What, v.Class, v.Deep, below(v)
		}
	}
	if fn.via == nil || !s.reportedBelow(fn.via) || fn.Settled {
		return
	}
	for _, site := range fn.Sites {
		if site.Unguarded() && !s.reportedBelow(site) {
			fn.via = site
			return
		}
	}
}

// decidesAny reports whether fn reaches an effect not reported in another package: a
// provider call, a function of the package that performs one, or another package's
// function whose effect is not reported further down.
func (s *scanner) decidesAny(fn *Func) bool {
	for _, site := range fn.Sites {
		if site.decides() {
			return true
		}
	}
	return false
}

// wrapper reports whether each effect fn makes is a call of a provider's SDK (not a raw
// HTTP request) or of a function of its package, made unconditionally (a statement of its body, not in a branch or a
// loop), with arguments that are only what
// fn is given: its parameters, its receiver's fields, constants, and values built from
// them without calling anything but conversions and builtins. Such a function decides
// nothing about the effect; its callers do.
func (s *scanner) wrapper(fn *Func) bool {
	n := 0
	for _, site := range fn.Sites {
		if !site.decides() {
			continue
		}
		n++
		// A wrapper lives with the client: it calls the provider, or a function of its
		// own package. One calling another package's function is that function's user.
		// Raw requests are the transports' (see markTransports): a wrapper is an SDK's.
		if site.Effect == nil && s.res.ByObj[site.Callee] == nil || site.Class == catalog.HTTP {
			return false
		}
		if !topLevel(fn.Decl.Body, site.Call) && !s.nextTurn(fn, site) {
			return false
		}
		t := tracer{pass: s.pass, fn: fn.Decl}
		for _, a := range site.Call.Args {
			if !t.forwarded(a, site.Call.Pos(), 0) {
				return false
			}
		}
	}
	return n > 0
}

// nextTurn reports whether a site in a loop is a further turn of a conversation the
// function starts unconditionally: the same callee is called by a statement of the body
// before the loop, and an error of the call in the loop leaves the function (an agent
// loop that asks the model again with the tools' results, not a retry loop, which
// repeats a failed call). Its turns are the wrapper's one effect, made for its callers.
func (s *scanner) nextTurn(fn *Func, site *Site) bool {
	body := fn.Decl.Body
	if !repeated(body, site.Call) || !s.errorReturns(body, site.Call) {
		return false
	}
	for _, other := range fn.Sites {
		if other != site && other.Callee == site.Callee && other.Call.Pos() < site.Call.Pos() && topLevel(body, other.Call) {
			return true
		}
	}
	return false
}

// errorReturns reports whether the statement after the assignment of call's results
// returns when its error result is not nil: `res, err = call(); if err != nil { return }`.
func (s *scanner) errorReturns(body *ast.BlockStmt, call *ast.CallExpr) bool {
	info := s.pass.TypesInfo
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		blk, ok := n.(*ast.BlockStmt)
		if found || !ok {
			return !found
		}
		for i, st := range blk.List {
			as, ok := st.(*ast.AssignStmt)
			if !ok || len(as.Rhs) != 1 || ast.Unparen(as.Rhs[0]) != call || i+1 >= len(blk.List) {
				continue
			}
			id, ok := as.Lhs[len(as.Lhs)-1].(*ast.Ident)
			if !ok {
				return false
			}
			errVar, _ := info.ObjectOf(id).(*types.Var)
			ifs, ok := blk.List[i+1].(*ast.IfStmt)
			if errVar == nil || !isErrorType(errVar.Type()) || !ok || ifs.Init != nil || len(ifs.Body.List) == 0 {
				return false
			}
			cond, ok := ast.Unparen(ifs.Cond).(*ast.BinaryExpr)
			if !ok || cond.Op != token.NEQ {
				return false
			}
			l, ok := ast.Unparen(cond.X).(*ast.Ident)
			if !ok || info.ObjectOf(l) != errVar {
				return false
			}
			_, found = ifs.Body.List[len(ifs.Body.List)-1].(*ast.ReturnStmt)
			// if retryable(err) { continue }: an error that goes round again is a retry.
			ast.Inspect(ifs.Body, func(n ast.Node) bool {
				if b, ok := n.(*ast.BranchStmt); ok && (b.Tok == token.CONTINUE || b.Tok == token.GOTO) {
					found = false
				}
				_, lit := n.(*ast.FuncLit)
				return found && !lit
			})
			return false
		}
		return true
	})
	return found
}

// topLevel reports whether call is made by a statement of body itself (or the init
// statement of an if among them), not in a branch, a loop or a closure.
func topLevel(body *ast.BlockStmt, call *ast.CallExpr) bool {
	for _, st := range body.List {
		if ifs, ok := st.(*ast.IfStmt); ok {
			st = ifs.Init
			if st == nil {
				continue
			}
		}
		switch st.(type) {
		case *ast.ExprStmt, *ast.AssignStmt, *ast.ReturnStmt, *ast.DeclStmt:
		default:
			continue
		}
		if st.Pos() > call.Pos() || call.End() > st.End() {
			continue
		}
		inside := false
		ast.Inspect(st, func(n ast.Node) bool {
			if _, ok := n.(*ast.FuncLit); ok {
				return false
			}
			if n == call {
				inside = true
			}
			return !inside
		})
		return inside
	}
	return false
}

// sendsSQL reports whether fn sends an SQL statement itself (the SQL of the whole package
// is collected after the findings are placed).
func (s *scanner) sendsSQL(fn *Func) bool {
	sends := false
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !sends {
			_, sends = sqltext.Sent(s.pass.TypesInfo, call)
		}
		return !sends
	})
	return sends
}

// soleCaller returns the one function of the package that calls fn, or nil when none or
// several do.
func soleCaller(fn *Func) *Func {
	var g *Func
	for _, e := range fn.callers {
		if g != nil && e.from != g {
			return nil
		}
		g = e.from
	}
	return g
}

// decidesOwn reports whether fn makes an effect no promise covers itself, not through a
// function of the package: a provider call, or a call of another package's function
// whose effect is not reported further down.
func (s *scanner) decidesOwn(fn *Func) bool {
	if !fn.Effectful {
		return false
	}
	for _, site := range fn.Sites {
		if site.decides() && !site.fromCond && s.res.ByObj[site.Callee] == nil {
			return true
		}
	}
	return false
}

// interfaceMethods returns the methods of the package's interface types, declared here.
func (s *scanner) interfaceMethods() []*types.Func {
	var out []*types.Func
	scope := s.pass.Pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		iface, ok := tn.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for i := range iface.NumMethods() {
			if m := iface.Method(i); m.Pkg() == s.pass.Pkg {
				out = append(out, m)
			}
		}
	}
	return out
}

// reaches reports whether fn calls a function of the package that performs an effect,
// or one of the effects that depend on a parameter.
func reaches(fn *Func) bool {
	for _, e := range fn.calls {
		if e.to.Effectful || len(e.to.cond) > 0 {
			return true
		}
	}
	return false
}

// addCallSite records the call of an effectful in-package function as a site of its
// caller, named as the call is written (an interface's method, for a call that dispatches
// to an implementation: one site for each effectful implementation).
func (s *scanner) addCallSite(e *edge) {
	name := e.to.Obj
	if static, ok := typeutil.Callee(s.pass.TypesInfo, e.call).(*types.Func); ok {
		name = static.Origin()
	}
	v := e.to.via
	e.from.Sites = append(e.from.Sites, &Site{
		Call: e.call, Func: e.from, Name: DisplayName(s.pass.TypesInfo, e.call, name),
		Via: v.Via, What: v.What, Class: v.Class, Deep: v.Deep, Guard: e.guard, Callee: e.to.Obj,
		Chain: below(v), fromCond: e.fromCond,
	})
}

// below names the functions a call reaching site's effect goes through after the
// function holding site: none for a provider call, else site's callee and what it calls.
func below(site *Site) []string {
	if site.Effect != nil || site.Callee == nil {
		return nil
	}
	return append([]string{FuncName(site.Callee)}, site.Chain...)
}

// exportedAPI reports whether other packages can call fn by name.
func exportedAPI(fn *types.Func) bool {
	if !fn.Exported() {
		return false
	}
	if named, ok := recvBase(fn).(*types.Named); ok {
		return named.Obj().Exported()
	}
	return true
}

// recvBase returns the type of a method's receiver, through a pointer; nil for a
// function.
func recvBase(fn *types.Func) types.Type {
	recv := fn.Signature().Recv()
	if recv == nil {
		return nil
	}
	if p, ok := recv.Type().(*types.Pointer); ok {
		return p.Elem()
	}
	return recv.Type()
}

// foreignPort reports whether method fn implements a method of an interface declared in
// another package of the module that the package imports, directly or not.
func (s *scanner) foreignPort(fn *types.Func) bool {
	t := recvBase(fn)
	if t == nil {
		return false
	}
	for _, pkg := range s.moduleImports() {
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || !tn.Exported() {
				continue
			}
			iface, ok := tn.Type().Underlying().(*types.Interface)
			if !ok || iface.Empty() {
				continue
			}
			has := false
			for i := range iface.NumMethods() {
				has = has || iface.Method(i).Name() == fn.Name()
			}
			if has && (types.Implements(t, iface) || types.Implements(types.NewPointer(t), iface)) {
				return true
			}
		}
	}
	return false
}

// ownEffect reports whether fn performs an effect whatever its parameters: an unguarded
// site that is not one of its conditional effects made plain.
func ownEffect(fn *Func) bool {
	for _, site := range fn.Sites {
		if site.Unguarded() && !site.fromCond {
			return true
		}
	}
	return false
}

// exportInterfaceFacts exports, on each method of the package's interfaces that an
// implementation of the package performs an effect through, that effect: a call of
// PaymentProvider.Pay in another package reaches the Stripe implementation's charge.
func (s *scanner) exportInterfaceFacts() bool {
	any := false
	for _, m := range s.interfaceMethods() {
		if !m.Exported() {
			continue
		}
		// The call reaches every implementation: name one whose effect is not reported
		// further down, if there is one, for that one is reported only at the call.
		var pick *Func
		for _, impl := range s.implementations(m) {
			if impl.Effectful && impl.via != nil && !impl.Covered {
				if pick == nil || (pick.Reports || pick.Settled) && !(impl.Reports || impl.Settled) {
					pick = impl
				}
			}
		}
		if pick != nil {
			s.pass.ExportObjectFact(m, &EffectFact{Via: pick.via.Via, Effect: pick.via.What, Class: pick.via.Class, Chain: append([]string{FuncName(pick.Obj)}, below(pick.via)...), Reported: pick.Reports || pick.Settled})
			any = true
		}
	}
	return any
}

// exportFacts exports the facts callers in other packages need.
func (s *scanner) exportFacts() {
	any := false
	module := inModule(s.pass)
	for _, fn := range s.res.Funcs {
		if fn.Test {
			continue
		}
		if fn.Directive != nil {
			s.pass.ExportObjectFact(fn.Obj, guardedFact(fn))
			any = true
			continue
		}
		// Only the module's own functions carry an effect to their callers: a library's
		// internals are not effects unless the catalogue names them. A function covered
		// by its callers here may still be called unguarded elsewhere; one reported at
		// its definition tells its callers so, for the checks that look at what a call
		// reaches (a request memo around it, a per-process set in front of it).
		if module && exportedAPI(fn.Obj) {
			switch {
			case len(fn.cond) > 0 && fn.Directive == nil && !ownEffect(fn):
				c := fn.cond[0]
				s.pass.ExportObjectFact(fn.Obj, &EffectFact{Via: c.Via, Effect: c.What, Class: c.Class, Chain: below(c), Cond: true, Param: c.Param, Methods: c.Methods, URLArg: condURLArg(fn), Reported: fn.Reports || fn.Settled})
				any = true
			case fn.Effectful && fn.via != nil:
				s.pass.ExportObjectFact(fn.Obj, &EffectFact{Via: fn.via.Via, Effect: fn.via.What, Class: fn.via.Class, Chain: below(fn.via), Reported: fn.Reports || fn.Settled})
				any = true
			}
		}
		// Any method with an exported name can be called from elsewhere, through a value
		// an exported function returns.
		if r, ok := s.latches[fn.Obj]; ok && fn.Obj.Exported() {
			s.pass.ExportObjectFact(fn.Obj, &LatchFact{Result: r})
			any = true
		}
		if len(fn.sqlSummary) > 0 && fn.Obj.Exported() {
			s.pass.ExportObjectFact(fn.Obj, &SQLFact{Stmts: fn.sqlSummary})
			any = true
		}
	}
	if module && s.exportInterfaceFacts() {
		any = true
	}
	if any {
		s.pass.ExportPackageFact(new(PackageFact))
	}
}
