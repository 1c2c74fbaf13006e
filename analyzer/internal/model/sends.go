package model

import (
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/catalog"
)

// transport handles a call that sends a request: an effect when the catalogue names its
// endpoint, nothing for a read or a method a repeat cannot change state with, else a send
// the coverage lists (or, with the method, URL or request still to come from a
// parameter, a send for the callers to finish).
func (a *analyzer) transport(u *unit, f *ssa.Function, call ssa.CallInstruction, c *ctx, fn *types.Func, t *catalog.Transport) {
	common := call.Common()
	s := Send{Retries: t.Retries, Reads: bodyRead(call)}
	if a.user {
		s.Boundary = FuncName(u.obj)
	}
	if t.URL != nil {
		s.Method = t.Method
		a.urlOf(u, sigArg(common, fn, *t.URL), &s)
	} else {
		a.requestOf(u, sigArg(common, fn, *t.Request), &s)
	}
	a.resolveSend(u, f, call, c, Display(fn), s, t.Retries)
}

// mapSend finishes a callee's send with the arguments of the call.
func (a *analyzer) mapSend(u *unit, f *ssa.Function, call ssa.CallInstruction, c *ctx, fn *types.Func, s Send) {
	common := call.Common()
	ns := s
	ns.URL = append([]string(nil), s.URL...)
	fill := func(param *int, from func(*unit, ssa.Value, *Send)) {
		if i := *param; i > 0 {
			*param = 0
			from(u, ArgAt(common, i-1), &ns)
		}
	}
	fill(&ns.MethodParam, a.methodOf)
	fill(&ns.URLParam, a.urlOf)
	fill(&ns.ReqParam, a.requestOf)
	ns.Reads = ns.Reads || bodyRead(call)
	if _, ok := call.(*ssa.Go); !a.user && (ok || c.async) {
		ns.Async = true // a dependency's background worker sends it
	}
	if ns.Boundary == "" && a.user {
		ns.Boundary = FuncName(fn)
	}
	// A dependency's own retries are its knowledge of the API it sends to; only the
	// module's count as a retry of a request no catalogue entry classifies.
	a.resolveSend(u, f, call, c, Display(fn), ns, ns.Retries && a.own(fn.Pkg()))
}

func (a *analyzer) resolveSend(u *unit, f *ssa.Function, call ssa.CallInstruction, c *ctx, via string, s Send, client bool) {
	if s.Method != "" && s.Method != "POST" && s.Method != "PATCH" {
		return // GET reads; PUT and DELETE leave what the first left (RFC 9110)
	}
	if retryLoop(f, call) {
		s.Retries, u.retries = true, true
	}
	if s.pending() {
		s.Retries = s.Retries || c.repeat != nil // a retry helper runs the literal: the caller's send repeats
		s.Reads = false                          // a helper reads the answer for every caller; whether it is one is the caller's
		u.sends = append(u.sends, s)
		return
	}
	if a.cat.ReadURL(s.URL, s.Lead) {
		return
	}
	if e := a.cat.EndpointEffect(s.URL, s.Lead); e != nil {
		ef := &eff{Effect: Effect{Site: a.posString(call.Pos()), Func: Display(u.obj), Via: via + " to " + endpoint(e), What: e.Effect, Class: e.Class}, pos: call.Pos()}
		if !a.user {
			ef.Site, ef.Func, ef.Via = "", "", endpoint(e)
		}
		a.site(ef)
		names := slices.Collect(maps.Keys(a.cat.KeyHeaders()))
		if e.Key != nil {
			names = append(names, e.Key.HeaderNames()...)
		}
		if a.headerSet(f, names) {
			a.cov.cover(ef, "an idempotency key")
			return
		}
		if s.Retries {
			ef.Repeat, ef.repeatPos = "the retrying client "+via, call.Pos()
		}
		ef.Fresh = slices.ContainsFunc(f.Params, func(v *ssa.Parameter) bool { return u.flows.of(v).flags&Random != 0 })
		a.addEffect(u, f, call, c, ef)
		return
	}
	if !a.user {
		u.sends = append(u.sends, s)
		return
	}
	s.Site = a.posString(call.Pos())
	if a.inPackage(call.Pos()) {
		a.cov.Sends = append(a.cov.Sends, s)
	}
	if (s.Method == "POST" || s.Method == "PATCH") && !s.Async && !s.Reads && !a.headerSet(f, slices.Collect(maps.Keys(a.cat.KeyHeaders()))) {
		// The coverage lists it; the code's own retry of it is a finding as well.
		ef := &eff{Effect: Effect{Site: s.Site, Func: Display(u.obj), Via: via, What: "sends a " + s.Method + " request", Class: RequestClass}, pos: call.Pos()}
		if client {
			ef.repeatBy(&root{what: "the retrying client " + via, pos: call.Pos()}, true)
		}
		a.addEffect(u, f, call, c, ef)
	}
}

// headerSet reports whether f sets one of the headers on a request.
func (a *analyzer) headerSet(f *ssa.Function, names []string) bool {
	for c := range instrs[ssa.CallInstruction](f) {
		if h, ok := ConstString(ArgAt(c.Common(), 1)); ok && strings.HasPrefix(callee(c), "(net/http.Header).") && namesHeader(names, h) {
			return true
		}
	}
	return a.headerOption(f, names) != nil
}

// paramIndex returns 1 + the index of v among the unit's parameters, or 0.
func paramIndex(u *unit, v ssa.Value) int {
	return slices.Index(u.fn.Params, paramOf(v)) + 1
}

func (a *analyzer) methodOf(u *unit, v ssa.Value, s *Send) {
	if m, ok := ConstString(v); ok {
		s.Method = strings.ToUpper(m)
	} else if i := paramIndex(u, v); i > 0 {
		s.MethodParam = i
	}
}

// urlOf adds the constant parts of a URL value to s, or the parameter it comes from.
func (a *analyzer) urlOf(u *unit, v ssa.Value, s *Send) {
	first := len(s.URL) == 0
	if lead := a.urlParts(u, v, s, 0); first {
		s.Lead = lead
	}
}

// urlParts appends v's constant parts and reports whether v starts with a constant.
func (a *analyzer) urlParts(u *unit, v ssa.Value, s *Send, depth int) bool {
	if depth > 8 {
		return false
	}
	switch x := v.(type) {
	case *ssa.Const:
		if str, ok := ConstString(x); ok {
			s.URL = append(s.URL, str)
			return true
		}
	case *ssa.BinOp:
		if x.Op == token.ADD {
			lead := a.urlParts(u, x.X, s, depth+1)
			a.urlParts(u, x.Y, s, depth+1)
			return lead
		}
	case *ssa.Parameter, *ssa.UnOp:
		if i := paramIndex(u, x); i > 0 {
			if s.URLParam == 0 {
				s.URLParam = i
			}
		} else if un, ok := x.(*ssa.UnOp); ok {
			if fa, ok := un.X.(*ssa.FieldAddr); ok {
				return a.fieldURL(u, fa, s)
			}
		}
	case *ssa.Call:
		if fn, _ := calleeFunc(x.Common()); fn != nil && FuncName(fn) == "fmt.Sprintf" && len(x.Common().Args) > 1 {
			format, ok := ConstString(x.Common().Args[0])
			if !ok {
				return false
			}
			// The verbs given constants are filled in; each other verb splits a part.
			args := variadic(x.Common().Args[1])
			cur, lead := "", true
			for i, piece := range strings.Split(format, "%") {
				if i > 0 {
					if verb := strings.TrimLeft(piece, "+#0123456789."); verb != "" {
						piece = verb[1:]
					}
					if i-1 < len(args) {
						if c, ok := ConstString(args[i-1]); ok {
							cur += c + piece
							continue
						}
					}
					if i == 1 && cur == "" {
						lead = false
					}
					if cur != "" {
						s.URL = append(s.URL, cur)
					}
					cur = ""
				}
				cur += piece
			}
			if cur != "" {
				s.URL = append(s.URL, cur)
			}
			return lead
		}
	}
	return false
}

// variadic returns the values given in a variadic call's slice, in order, seen through
// their conversion to interfaces.
func variadic(v ssa.Value) []ssa.Value {
	sl, ok := v.(*ssa.Slice)
	if !ok {
		return nil
	}
	var out []ssa.Value
	for _, r := range Refs(sl.X) {
		if ia, ok := r.(*ssa.IndexAddr); ok {
			if i, ok := constInt(ia.Index); ok {
				for _, st := range storesTo(ia) {
					for int(i) >= len(out) {
						out = append(out, nil)
					}
					out[i] = st.Val
					if mi, ok := st.Val.(*ssa.MakeInterface); ok {
						out[i] = mi.X
					}
				}
			}
		}
	}
	return out
}

// fieldURL fills in a URL read from a struct field with what the package stores there:
// a client built with its endpoint (&Provider{APIPath: base + "/Messages.json"}). It
// reports whether every store starts with the same constant.
func (a *analyzer) fieldURL(u *unit, fa *ssa.FieldAddr, s *Send) bool {
	field := fieldOf(fa)
	got, ok := a.fieldURLs[field]
	if !ok {
		a.fieldURLs[field] = nil // a cycle reads nothing
		got = &Send{}
		first := true
		for _, owner := range a.sortedUnits() {
			for st := range instrs[*ssa.Store](withLiterals(owner.fn)...) {
				sfa, ok := st.Addr.(*ssa.FieldAddr)
				if !ok || fieldOf(sfa) != field {
					continue
				}
				one := &Send{}
				lead := a.urlParts(owner, st.Val, one, 0)
				if first {
					got.URL, got.Lead = one.URL, lead && len(one.URL) > 0
					first = false
				} else if !lead || len(one.URL) == 0 || len(got.URL) == 0 || one.URL[0] != got.URL[0] {
					got.Lead = false
				}
			}
		}
		a.fieldURLs[field] = got
	}
	if got == nil {
		return false
	}
	s.URL = append(s.URL, got.URL...)
	return got.Lead
}

// withLiterals returns f and the function literals written in it, at any depth.
func withLiterals(f *ssa.Function) []*ssa.Function {
	out := []*ssa.Function{f}
	for i := 0; i < len(out); i++ {
		out = append(out, out[i].AnonFuncs...)
	}
	return out
}

// requestOf finds how the request v was built: its method and URL.
func (a *analyzer) requestOf(u *unit, v ssa.Value, s *Send) {
	for depth := 0; depth < 8 && v != nil; depth++ {
		switch x := v.(type) {
		case *ssa.Parameter:
			if i := paramIndex(u, x); i > 0 {
				s.ReqParam = i
			}
			return
		case *ssa.Phi, *ssa.UnOp, *ssa.Extract:
			v = *x.(ssa.Instruction).Operands(nil)[0] // the first edge, the operand, the tuple
			continue
		case *ssa.FreeVar: // a request a literal shares with the function around it
			v = binding(x)
			continue
		case *ssa.Alloc:
			if st := storesTo(x); len(st) == 1 {
				v = st[0].Val
				continue
			}
		case *ssa.Call:
			if fn, _ := calleeFunc(x.Common()); fn != nil {
				if r := a.cat.Request(FuncName(fn)); r != nil {
					a.methodOf(u, sigArg(x.Common(), fn, r.Method), s)
					a.urlOf(u, sigArg(x.Common(), fn, r.URL), s)
					a.methodSet(u, x, s)
					return
				}
				if fn.Signature().Recv() != nil {
					v = ArgAt(x.Common(), 0) // req.WithContext(ctx), req.Clone(ctx)
					continue
				}
			}
		}
		return
	}
}

// methodSet applies a later req.Method = "..." to the request built by call.
func (a *analyzer) methodSet(u *unit, call *ssa.Call, s *Send) {
	for _, r := range Refs(call) {
		if ex, ok := r.(*ssa.Extract); ok && ex.Index == 0 {
			for _, rr := range Refs(ex) {
				if fa, ok := rr.(*ssa.FieldAddr); ok && fa.Field == 0 {
					for _, st := range storesTo(fa) {
						a.methodOf(u, st.Val, s)
					}
				}
			}
		}
	}
}

// endpoint writes a catalogue endpoint for messages.
func endpoint(e *catalog.Effect) string {
	if e.URL != "" && e.Path != "" {
		return e.URL + "…" + e.Path
	}
	return e.URL + e.Path
}

// bodyRead reports whether the body of the *http.Response a call returns is read, beyond
// closing it or draining it into io.Discard.
func bodyRead(call ssa.CallInstruction) bool {
	v, ok := call.(*ssa.Call)
	if !ok {
		return false
	}
	var resps []ssa.Value
	for _, r := range Refs(v) {
		if ex, ok := r.(*ssa.Extract); ok && typeName(ex.Type()) == "net/http.Response" {
			resps = append(resps, ex)
		}
	}
	for i := 0; i < len(resps) && i < 64; i++ {
		for _, r := range Refs(resps[i]) {
			if phi, ok := r.(*ssa.Phi); ok && !slices.Contains(resps, ssa.Value(phi)) {
				resps = append(resps, phi) // resp, err = c.Do(req) in a loop, read after it
			}
			fa, ok := r.(*ssa.FieldAddr)
			if !ok || typeName(fieldOf(fa).Type()) != "io.ReadCloser" {
				continue
			}
			uses := slices.Clone(Refs(fa))
			for i := 0; i < len(uses); i++ {
				switch u := uses[i].(type) {
				case *ssa.UnOp, *ssa.ChangeInterface: // the body loaded; io.ReadAll takes an io.Reader
					uses = append(uses, Refs(u.(ssa.Value))...)
				case ssa.CallInstruction:
					arg, _ := ArgAt(u.Common(), 0).(*ssa.UnOp) // io.Copy(io.Discard, resp.Body) drains it
					if callee(u) != "(io.Closer).Close" && !(callee(u) == "io.Copy" && arg != nil && arg.X.String() == "io.Discard") {
						return true
					}
				}
			}
		}
	}
	return false
}
