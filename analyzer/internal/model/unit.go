package model

import (
	"cmp"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/catalog"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/internal/directive"
)

// unit is one declared function with the function literals written in it: the unit of a
// summary, since a literal's effects happen when the function runs (unless a framework,
// a retry helper or a guard runs it, which its context says).
type unit struct {
	obj   *types.Func
	fn    *ssa.Function
	decl  *directive.Directive
	state int // 0 new, 1 in progress, 2 done
	flows *flows
	effs  []*eff
	sends []Send
	keys  []KeyParam
	// latches are the calls of declared claims: code they dominate runs under them.
	latches    []ssa.CallInstruction
	retries    bool
	retryArg   int // the parameter it calls again after a failure, from 1: a retry helper
	setVerdict bool
	root       *root
	fact       *FuncFact
}

// eff is an effect on its way up through a unit.
type eff struct {
	Effect
	pos       token.Pos
	at        ssa.Instruction
	params    uint64
	repeatPos token.Pos
	unrelated []string
	implPos   []token.Pos
}

// open reports an open interface call (see openCall), not an effect.
func (e *Effect) open() bool { return len(e.Iface) > 0 }

// root is code a framework or a retry runs again.
type root struct {
	what string
	pos  token.Pos
}

// repeatBy records r, if any, as what runs e again, unless something already does, and
// whether it is the code's own retry.
func (e *eff) repeatBy(r *root, retry bool) {
	if r != nil && e.Repeat == "" {
		e.Repeat, e.repeatPos = r.what, r.pos
	}
	e.Retried = e.Retried || r != nil && retry
}

// ctx is what runs a function literal: a guard (its effects are covered), a retry helper
// or a framework (its effects repeat; a framework's are reported here, not propagated).
// The unit's function runs under the zero ctx.
type ctx struct {
	guard  *guardCtx
	repeat *root
	root   *root
	worker string // the queue a worker started with go receives from
	async  bool   // started with go: its sends are not its caller's
}

type guardCtx struct {
	kind directive.Kind
	key  flow
	name string
	pos  token.Pos
	effs []*eff
}

func (a *analyzer) analyse(pkg *ssa.Package) {
	a.called = map[*types.Func]bool{}
	a.roots = map[*types.Func]root{}
	a.queued = map[string][]*eff{}
	a.rootTypes = map[string]bool{}
	a.found = map[string]*Finding{}
	a.synthetic = map[string]token.Pos{}
	a.fieldURLs = map[*types.Var]*Send{}
	for _, f := range a.pass.Files {
		if a.isTest(f.Pos()) {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if obj, ok := a.pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
				if fn := pkg.Prog.FuncValue(obj); fn != nil {
					a.units[obj] = &unit{obj: obj, fn: fn, decl: a.res.Declared[obj], retryArg: retriedParam(fn), flows: &flows{a: a, top: fn, memo: map[ssa.Value]*flow{}}}
					a.markCalled(fn)
				}
			}
		}
	}
	// The units starting a queue's worker go first: its effects are added where values
	// are sent to the queue, which may be anywhere in the package.
	units := a.sortedUnits()
	for _, u := range append(slices.DeleteFunc(slices.Clone(units), func(u *unit) bool { return !startsWorker(u.fn) }), units...) {
		a.summarize(u)
	}
	for _, u := range a.units {
		u.root = a.unitRoot(u) // what frameworks run
	}
	a.findSets()
	a.decide()
	a.bypasses()
	a.export()
}

func (a *analyzer) sortedUnits() []*unit {
	return slices.SortedFunc(maps.Values(a.units), func(x, y *unit) int { return cmp.Compare(x.obj.Pos(), y.obj.Pos()) })
}

// markCalled records the functions fn and its literals call statically.
func (a *analyzer) markCalled(fn *ssa.Function) {
	for c := range instrs[ssa.CallInstruction](withLiterals(fn)...) {
		if g, invoke := calleeFunc(c.Common()); g != nil && !invoke {
			a.called[g.Origin()] = true
		}
	}
}

// summarize computes the unit's summary, once; a recursive call sees what is known so far.
func (a *analyzer) summarize(u *unit) {
	if u.state != 0 {
		return
	}
	u.state = 1
	name := FuncName(u.obj)
	if _, ok := a.cat.Effect(name); ok || a.cat.IsRead(name) || a.noted(u.obj, "read") || a.cat.Transport(name) != nil {
		// The catalogue or the user says what a call of it does; its body is not judged.
		u.state = 2
		return
	}
	a.walk(u, u.fn, &ctx{})
	if d := u.decl; d != nil {
		a.promise(u, d)
	}
	if a.noted(u.obj, "repeat") {
		for _, e := range u.effs {
			a.cov.cover(e, "a declared repeat")
		}
		u.effs = nil
	}
	u.state = 2
}

// promise applies the unit's own //once: promise to what it reaches.
func (a *analyzer) promise(u *unit, d *directive.Directive) {
	key := flow{}
	for _, k := range d.Key {
		key.params |= a.exprParams(u, k.Text)
	}
	if i := slices.IndexFunc(u.effs, func(e *eff) bool { return e.known() }); !HoldsPaidEffect(d.Kind) && i >= 0 {
		a.res.Requests = append(a.res.Requests, &RequestFinding{Pos: d.Func.Name.Pos(), Guard: "the //once:" + string(d.Kind) + " promise on " + Display(u.obj), Effect: u.effs[i].Effect})
		for _, e := range u.effs {
			e.Reported = true // ONCE006's finding: one per mistake
		}
	}
	if !Covers(d.Kind) {
		return
	}
	var keep []*eff
	for _, e := range u.effs {
		if d.HasTable() || related(u, e, key) {
			a.cov.cover(e, string(d.Kind))
			continue
		}
		e.unrelated = append(e.unrelated, "the //once:"+string(d.Kind)+" promise of "+Display(u.obj))
		keep = append(keep, e)
	}
	u.effs = keep
}

// exprParams returns the parameters a key expression mentions.
func (a *analyzer) exprParams(u *unit, text string) uint64 {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
	})
	var m uint64
	for i, p := range u.fn.Params {
		if i < 64 && slices.ContainsFunc(words, func(w string) bool { return w == p.Name() }) {
			m |= 1 << i
		}
	}
	return m
}

// related reports whether a promise keyed by key covers e: e's content derives from the
// key's parameters, or from nothing the function is given but its receiver.
func related(u *unit, e *eff, key flow) bool {
	if key.params == 0 {
		return true
	}
	var recv uint64
	if u.obj.Signature().Recv() != nil {
		recv = 1
	}
	return e.params&key.params != 0 || e.params&^recv == 0
}

// walk visits a function of the unit and the literals written in it.
func (a *analyzer) walk(u *unit, f *ssa.Function, c *ctx) {
	for ins := range instrs[ssa.Instruction](f) {
		if call, ok := ins.(ssa.CallInstruction); ok {
			a.visitCall(u, f, call, c)
		} else if s, ok := ins.(*ssa.Send); ok {
			a.sendOn(u, f, s, c)
		}
	}
	for _, anon := range f.AnonFuncs {
		a.walk(u, anon, a.closureCtx(u, f, anon, c))
	}
}

// closureCtx decides what runs a function literal, from where it goes.
func (a *analyzer) closureCtx(u *unit, f, anon *ssa.Function, parent *ctx) *ctx {
	c := *parent
	if r := a.cat.RootSignature(SignatureString(anon.Signature)); r != nil {
		c.root = &root{what: r.Root, pos: anon.Pos()}
	}
	if slices.Contains(started(f), anon) {
		c.worker, c.async = workerQueue(anon), true
	}
	for _, v := range closureValues(f, anon) {
		for _, r := range Refs(v) {
			switch r := r.(type) {
			case ssa.CallInstruction:
				common := r.Common()
				fn, _ := calleeFunc(common)
				if fn == nil {
					continue
				}
				name := FuncName(fn)
				if g, ok := guardCalls[name]; ok && g.fn >= 0 && sigArg(common, fn, g.fn) == v {
					gc := &guardCtx{kind: g.kind, name: Display(fn), pos: r.Pos()}
					if g.key >= 0 {
						gc.key = u.flows.of(sigArg(common, fn, g.key))
					}
					c.guard = gc
					a.guards = append(a.guards, gc)
				}
				if rt := a.retry(fn, name); rt != nil && sigArg(common, fn, rt.Arg) == v {
					c.repeat = &root{what: "retried by " + Display(fn), pos: r.Pos()}
				}
				if rt := a.cat.RootFunc(name); rt != nil && rt.Arg != nil && sigArg(common, fn, *rt.Arg) == v {
					c.root = &root{what: rt.Root, pos: anon.Pos()}
				}
				if t := a.paramRootType(fn, common, v); t != "" {
					c.root = &root{what: "run by the framework as a " + t, pos: anon.Pos()}
				}
			case *ssa.ChangeType, *ssa.Convert:
				if t := typeName(r.(ssa.Value).Type()); a.isRootType(t) {
					c.root = &root{what: "run by the framework as a " + t, pos: anon.Pos()}
				}
			case *ssa.Return:
				for i, rv := range r.Results {
					if t := typeName(f.Signature.Results().At(i).Type()); rv == v && a.isRootType(t) {
						c.root = &root{what: "run by the framework as a " + t, pos: anon.Pos()}
					}
				}
			}
		}
	}
	return &c
}

// closureValues returns the values by which f refers to a literal: the literal itself,
// the closure made of it, and their conversions to named function types or interfaces.
func closureValues(f, anon *ssa.Function) []ssa.Value {
	out := []ssa.Value{anon}
	for mc := range instrs[*ssa.MakeClosure](f) {
		if mc.Fn == anon {
			out = append(out, mc)
		}
	}
	for i := 0; i < len(out) && i < 8; i++ {
		for _, r := range Refs(out[i]) {
			switch r := r.(type) {
			case *ssa.ChangeType, *ssa.MakeInterface, *ssa.Convert:
				out = append(out, r.(ssa.Value))
			}
		}
	}
	return out
}

// visitCall classifies one call of the unit.
func (a *analyzer) visitCall(u *unit, f *ssa.Function, call ssa.CallInstruction, c *ctx) {
	if g, ok := call.(*ssa.Go); ok && g.Call.StaticCallee() != nil {
		if q := workerQueue(g.Call.StaticCallee()); q != "" {
			wc := *c
			wc.worker, c = q, &wc
		}
	}
	common := call.Common()
	fn, invoke := calleeFunc(common)
	if fn == nil {
		if t := typeName(common.Value.Type()); t != "" && (c.root != nil || u.root != nil || a.unitRoot(u) != nil) {
			a.rootTypes[t] = true
		}
		return
	}
	if fn.Pkg() == nil {
		return
	}
	name, shown := FuncName(fn), ""
	ps := promoted(common, fn)
	if i := slices.IndexFunc(ps, func(p [2]string) bool { return a.cat.Knows(p[0]) }); i >= 0 {
		name, shown = ps[i][0], ps[i][1]
	}
	if g, ok := guardCalls[name]; ok {
		if g.key >= 0 {
			a.keySink(u, call, sigArg(common, fn, g.key), string(g.kind), "the key of "+Display(fn))
		}
		return
	}
	if name == "(net/http.Header).Set" || name == "(net/http.Header).Add" {
		if h, ok := ConstString(ArgAt(common, 1)); ok && a.cat.KeyHeaders()[strings.ToLower(h)] {
			a.keySink(u, call, ArgAt(common, 2), "provider", "the "+h+" header")
		}
		return
	}
	if a.cat.IsRead(name) {
		return
	}
	if e, ok := a.cat.Effect(name); ok {
		ef := a.siteEffect(u, f, call, fn, e)
		if shown != "" {
			ef.Via = shown
		}
		a.addEffect(u, f, call, c, ef)
		return
	}
	if t := a.cat.Transport(name); t != nil {
		a.transport(u, f, call, c, fn, t)
		return
	}
	if r := a.retry(fn, name); r != nil {
		if g := funcValue(sigArg(common, fn, r.Arg)); g != nil {
			a.mergeCall(u, f, call, c, g, &root{what: "retried by " + Display(fn), pos: call.Pos()})
		}
		if a.cat.Retry(name) != nil {
			return // the analysed code's own helper may do more than retry: it is merged below
		}
	}
	if r := a.cat.RootFunc(name); r != nil && r.Arg != nil {
		for _, g := range registered(sigArg(common, fn, *r.Arg)) {
			a.roots[g.Origin()] = root{what: r.Root, pos: call.Pos()}
		}
		return
	}
	a.registrations(common, fn)
	if invoke || types.IsInterface(recvType(fn)) {
		a.invoke(u, f, call, c, fn)
		return
	}
	a.mergeCall(u, f, call, c, fn, nil)
}

// funcValue returns the declared function a function value names (f, or x.M), or nil.
func funcValue(v ssa.Value) *types.Func {
	switch x := v.(type) {
	case *ssa.ChangeType, *ssa.MakeInterface:
		return funcValue(*x.(ssa.Instruction).Operands(nil)[0])
	case *ssa.Function:
		obj, _ := x.Object().(*types.Func)
		return obj
	case *ssa.MakeClosure:
		if isBound(x) {
			return funcValue(x.Fn)
		}
	}
	return nil
}

// registered returns the functions a framework runs for a value handed to it: the
// function it names, or the exported methods of a value of a named type handed over as an
// interface, each run on its own (Temporal's activities registered as a struct).
func registered(v ssa.Value) []*types.Func {
	if g := funcValue(v); g != nil {
		return []*types.Func{g}
	}
	mi, ok := v.(*ssa.MakeInterface)
	if !ok {
		return nil
	}
	t := mi.X.Type()
	if _, isFunc := t.Underlying().(*types.Signature); isFunc || typeName(t) == "" {
		return nil
	}
	if _, isPtr := t.(*types.Pointer); !isPtr {
		t = types.NewPointer(t)
	}
	var out []*types.Func
	for sel := range types.NewMethodSet(t).Methods() {
		if m, ok := sel.Obj().(*types.Func); ok && m.Exported() {
			out = append(out, m)
		}
	}
	return out
}

// summaryOf returns what calling fn does: its unit's summary in this package, its fact
// in another.
func (a *analyzer) summaryOf(fn *types.Func) *FuncFact {
	fn = fn.Origin()
	if fn.Pkg() == nil {
		return nil
	}
	if fn.Pkg() == a.pass.Pkg {
		u := a.units[fn]
		if u == nil {
			return nil
		}
		a.summarize(u)
		return a.factOf(u)
	}
	var f FuncFact
	if a.packageFact(fn.Pkg()) != nil && a.pass.ImportObjectFact(fn, &f) {
		return &f
	}
	return nil
}

// mergeCall adds what a call of fn does to the unit.
func (a *analyzer) mergeCall(u *unit, f *ssa.Function, call ssa.CallInstruction, c *ctx, fn *types.Func, repeat *root) {
	s := a.summaryOf(fn)
	if s == nil {
		return
	}
	common := call.Common()
	if s.Latch {
		u.latches = append(u.latches, call)
	}
	for _, k := range s.Keys {
		a.keySink(u, call, ArgAt(common, k.Param), k.Kind, "the key of "+Display(fn))
	}
	for _, e := range s.Effects {
		ne := a.mapEffect(u, call, fn, e)
		if ne == nil {
			continue
		}
		ne.repeatBy(repeat, true)
		if s.Retries && ne.known() { // a request is retried only where its own send is
			ne.repeatBy(&root{what: Display(fn) + " sends again by itself after a failure", pos: call.Pos()}, true)
		}
		a.addEffect(u, f, call, c, ne)
	}
	for _, s := range s.Sends {
		a.mapSend(u, f, call, c, fn, s)
	}
}

// mapEffect restates a callee's effect in the caller's terms.
func (a *analyzer) mapEffect(u *unit, call ssa.CallInstruction, fn *types.Func, ce Effect) *eff {
	if ce.Reported && ce.Site != "" {
		return nil // reported where it was found; one finding per cause
	}
	common := call.Common()
	ne := &eff{Effect: ce}
	ne.Params = nil
	for _, j := range ce.Params {
		fl := u.flows.of(ArgAt(common, j))
		ne.params |= fl.params
		ne.Fresh = ne.Fresh || fl.flags&Random != 0
	}
	if ce.KeyParam > 0 {
		k := a.keyOf(u, ArgAt(common, ce.KeyParam-1), ce.KeyField, ce.KeySetter)
		if k == keyed { // the caller gives the provider's key
			if ne.Site == "" {
				ne.Site, ne.pos = a.posString(call.Pos()), call.Pos()
				a.site(ne)
			}
			a.cov.cover(ne, "an idempotency key")
			return nil
		}
		ne.KeyParam = int(k)
	}
	recv := fn.Signature().Recv() != nil
	if ce.Site == "" || a.user && fn.Pkg() != a.pass.Pkg && slices.ContainsFunc(ce.Params, func(p int) bool { return p > 0 || !recv }) {
		// A dependency's effect is made at the analysed code's call; so is one of
		// another package's function whose content the call gives, beyond the receiver
		// (a service that sends what it is handed): the call decides what is sent.
		ne.Made = cmp.Or(ce.Made, ce.Site)
		ne.Site, ne.pos, ne.Func, ne.Via, ne.Ignored = a.posString(call.Pos()), call.Pos(), Display(u.obj), Display(fn), ce.Ignored
		a.site(ne)
	}
	return ne
}

// addEffect adds an effect reached at call in f to the unit, under what runs f.
func (a *analyzer) addEffect(u *unit, f *ssa.Function, call ssa.Instruction, c *ctx, e *eff) {
	if e == nil {
		return
	}
	e.at = cmp.Or(e.at, call)
	if (e.Repeat == "" || !e.known()) && retryLoop(f, call) { // only a request needs its own retry known
		e.repeatBy(&root{what: "the retry loop of " + Display(u.obj), pos: call.Pos()}, true)
	} else if e.Repeat == "" {
		if timerLoop(f, call) {
			e.Repeat, e.repeatPos = "the loop of "+Display(u.obj)+" that a timer turns: what failed, or was not recorded as done, is done again at the next turn, and every replica runs it", call.Pos()
		} else if r := a.delivered(f, call); r != nil {
			e.Repeat, e.repeatPos = r.what, r.pos
		}
	}
	if slices.ContainsFunc(u.latches, func(l ssa.CallInstruction) bool { return dominates(l, call) }) {
		a.cov.cover(e, "a claim declared with table=")
		return
	}
	if c.guard != nil {
		if e.known() {
			c.guard.effs = append(c.guard.effs, e)
			e.Reported = e.Reported || !HoldsPaidEffect(c.guard.kind) // ONCE006's finding: one per mistake
		}
		if Covers(c.guard.kind) {
			if related(u, e, c.guard.key) {
				a.cov.cover(e, string(c.guard.kind))
				return
			}
			e.unrelated = append(e.unrelated, "the "+c.guard.name+" guard")
		}
	}
	e.repeatBy(c.repeat, true)
	if c.root != nil {
		e.repeatBy(c.root, false)
		a.rootEffs = append(a.rootEffs, e)
		return
	}
	if c.worker != "" {
		a.queued[c.worker] = append(a.queued[c.worker], e) // made for each value sent
		return
	}
	u.effs = append(u.effs, e)
}

// siteEffect is a call of a catalogued effect, unless it carries the provider's key.
func (a *analyzer) siteEffect(u *unit, f *ssa.Function, call ssa.CallInstruction, fn *types.Func, ce *catalog.Effect) *eff {
	common := call.Common()
	e := &eff{Effect: Effect{Site: a.posString(call.Pos()), Func: Display(u.obj), Via: Display(fn), What: ce.Effect, Class: ce.Class}, pos: call.Pos()}
	for i := range fn.Signature().Params().Len() {
		v := sigArg(common, fn, i)
		if v == nil || isContext(v.Type()) {
			continue
		}
		fl := u.flows.of(v)
		e.params |= fl.params
		e.Fresh = e.Fresh || fl.flags&Random != 0
	}
	a.site(e)
	if k := ce.Key; k != nil {
		e.KeyField, e.KeySetter = k.Field, k.Setter
		if e.KeyField == "" && e.KeySetter == "" {
			e.KeyField = k.HeaderNames()[0]
		}
		if len(k.HeaderNames()) > 0 {
			if v := a.headerOption(f, k.HeaderNames()); v != nil {
				a.keySink(u, call, v, "provider", "the "+k.HeaderNames()[0]+" header")
				a.cov.cover(e, "an idempotency key")
				return nil
			}
		} else {
			st := a.keyOf(u, sigArg(common, fn, k.Arg), k.Field, k.Setter)
			if st == keyed {
				a.cov.cover(e, "an idempotency key")
				return nil
			}
			e.KeyParam = int(st)
		}
	}
	return e
}

// headerOption finds an option setting one of the headers among f's calls (the SDKs'
// option.WithHeader(name, value)), and returns the value.
func (a *analyzer) headerOption(f *ssa.Function, names []string) ssa.Value {
	for c := range instrs[ssa.CallInstruction](f) {
		if args := c.Common().Args; len(args) == 2 {
			if h, ok := ConstString(args[0]); ok && namesHeader(names, h) {
				return args[1]
			}
		}
	}
	return nil
}

// namesHeader reports whether h is one of the header names, in any case.
func namesHeader(names []string, h string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(h, n) })
}

// site records an effect site of this package.
func (a *analyzer) site(e *eff) {
	if !e.pos.IsValid() || a.pass.Fset.File(e.pos) == nil || !a.inPackage(e.pos) {
		return
	}
	a.res.Sites = append(a.res.Sites, e.pos)
	if e.known() {
		a.cov.Sites[e.Site] = e.Class
	}
	e.Ignored = e.Ignored || slices.ContainsFunc(a.res.Ignores.List, func(ig *ignore.Ignore) bool { return ig.Covers(e.pos, "ONCE001") })
}

func (a *analyzer) inPackage(pos token.Pos) bool {
	return slices.ContainsFunc(a.pass.Files, func(f *ast.File) bool { return f.FileStart <= pos && pos <= f.FileEnd })
}

// keyState says how a provider's key reaches a call: keyed (set here, or out of sight),
// none, or 1 + the parameter that carries it.
type keyState int

const (
	keyed keyState = -1
	noKey keyState = 0
)

// keyOf finds the key field or setter on the value given for a key-carrying argument.
func (a *analyzer) keyOf(u *unit, v ssa.Value, field, setter string) keyState {
	if p := paramOf(v); p != nil {
		v = p
	}
	for {
		switch x := v.(type) {
		case *ssa.MakeInterface, *ssa.ChangeType:
			v = *x.(ssa.Instruction).Operands(nil)[0]
			continue
		case *ssa.Parameter:
			if i := slices.Index(u.fn.Params, x); i >= 0 {
				return keyState(i + 1)
			}
			return keyed
		case *ssa.Alloc:
			if a.keySet(u, x, field, setter, 0) {
				return keyed
			}
			return noKey
		case *ssa.UnOp:
			if al, ok := x.X.(*ssa.Alloc); ok {
				v = al
				continue
			}
		case nil:
			return noKey
		}
		// Built by a helper or handed over: out of sight, given the benefit of the doubt.
		return keyed
	}
}

// keySet reports whether the key field is stored into the memory at v (at any depth of
// embedding) or its setter called on it; a key made from the clock or randomness is
// ONCE002's, reported where it is set.
func (a *analyzer) keySet(u *unit, v ssa.Value, field, setter string, depth int) bool {
	if depth > 4 {
		return false
	}
	for _, r := range Refs(v) {
		switch r := r.(type) {
		case *ssa.FieldAddr:
			fv := fieldOf(r)
			if fv.Name() == field && field != "" {
				for _, s := range storesTo(r) {
					a.keySink(u, s, s.Val, "provider", "the "+field+" field")
				}
				return true
			}
			if fv.Embedded() && a.keySet(u, r, field, setter, depth+1) {
				return true
			}
		case ssa.CallInstruction:
			if fn, _ := calleeFunc(r.Common()); fn != nil && fn.Name() == setter && setter != "" {
				a.keySink(u, r, ArgAt(r.Common(), 1), "provider", "the key set by "+setter)
				return true
			}
		case *ssa.UnOp, *ssa.MakeInterface, *ssa.ChangeType:
			if a.keySet(u, r.(ssa.Value), field, setter, depth+1) {
				return true
			}
		}
	}
	return false
}

func storesTo(addr ssa.Value) []*ssa.Store {
	var out []*ssa.Store
	for _, r := range Refs(addr) {
		if s, ok := r.(*ssa.Store); ok && s.Addr == addr {
			out = append(out, s)
		}
	}
	return out
}
