package model

import (
	"go/constant"
	"go/token"
	"go/types"
	"math/bits"
	"slices"
	"time"

	"golang.org/x/tools/go/ssa"
)

// flow is what a value of a function under analysis derives from: unstable sources and
// the parameters of the declared function (receiver first) it belongs to, closures
// included.
type flow struct {
	flags   Flags
	params  uint64
	buckets uint64
	src     token.Pos // the first unstable source, in this package
	srcName string
}

func (f *flow) merge(g flow) {
	if f.src == token.NoPos && f.srcName == "" {
		f.src, f.srcName = g.src, g.srcName
	}
	f.flags |= g.flags
	f.params |= g.params
	f.buckets |= g.buckets
}

// bucketed is f cut to a day or an hour: the clock gives the same value all day long.
func (f flow) bucketed() flow {
	if f.flags&Clock != 0 {
		f.flags = f.flags&^Clock | Bucket
	}
	f.buckets |= f.params
	return f
}

func paramList(mask uint64) []int {
	var out []int
	for mask != 0 {
		i := bits.TrailingZeros64(mask)
		out = append(out, i)
		mask &^= 1 << i
	}
	return out
}

// flows computes the flows of one declared function's values.
type flows struct {
	a    *analyzer
	top  *ssa.Function
	memo map[ssa.Value]*flow
}

// isContext reports a context.Context: it flows into every call and says nothing about
// what is sent.
func isContext(t types.Type) bool { return typeName(t) == "context.Context" }

// of returns the flow of v.
func (fs *flows) of(v ssa.Value) flow {
	if v == nil {
		return flow{}
	}
	if f, ok := fs.memo[v]; ok {
		return *f
	}
	res := &flow{}
	fs.memo[v] = res // cycles through phis and stores end here
	*res = fs.compute(v)
	return *res
}

func (fs *flows) compute(v ssa.Value) flow {
	var out flow
	switch v := v.(type) {
	case *ssa.Parameter:
		if v.Parent() == fs.top && !isContext(v.Type()) {
			if i := slices.Index(fs.top.Params, v); i >= 0 && i < 64 {
				out.params = 1 << i
			}
		}
	case *ssa.FreeVar:
		if b := binding(v); b != nil {
			return fs.of(b)
		}
	case *ssa.Call:
		return fs.call(v.Common(), v.Pos())
	case *ssa.Alloc, *ssa.MakeSlice, *ssa.MakeMap:
		fs.stores(v.(ssa.Value), &out, 0)
	case *ssa.UnOp:
		if v.Op == token.ARROW {
			return out
		}
		return fs.of(v.X)
	case *ssa.BinOp:
		out = fs.of(v.X)
		out.merge(fs.of(v.Y))
	case *ssa.Phi:
		for _, e := range v.Edges {
			out.merge(fs.of(e))
		}
	case *ssa.FieldAddr, *ssa.IndexAddr:
		out = fs.of(*v.(ssa.Instruction).Operands(nil)[0])
		fs.stores(v.(ssa.Value), &out, 0)
	case *ssa.Extract, *ssa.Field, *ssa.Index, *ssa.Lookup, *ssa.Slice, *ssa.Convert, *ssa.ChangeType, *ssa.ChangeInterface,
		*ssa.MakeInterface, *ssa.TypeAssert, *ssa.SliceToArrayPointer, *ssa.Next, *ssa.Range:
		return fs.of(*v.(ssa.Instruction).Operands(nil)[0]) // the value it is made from
	case *ssa.MakeClosure:
		for _, b := range v.Bindings {
			out.merge(fs.of(b))
		}
	}
	return out
}

// stores adds to out what is stored into the memory at v: stores through it and through
// addresses of its fields and elements, and what calls given it write there (rand.Read
// fills a buffer, Scan a row's values).
func (fs *flows) stores(v ssa.Value, out *flow, depth int) {
	if depth > 3 {
		return
	}
	for _, r := range Refs(v) {
		switch r := r.(type) {
		case *ssa.Store:
			if r.Addr == v {
				out.merge(fs.of(r.Val))
			}
		case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.Slice:
			fs.stores(r.(ssa.Value), out, depth+1)
		case *ssa.MapUpdate:
			out.merge(fs.of(r.Key))
			out.merge(fs.of(r.Value))
		case *ssa.Call:
			c := r.Common()
			if fn, _ := calleeFunc(c); fn != nil && fn.Pkg() != nil {
				if src := fs.a.cat.Unstable(FuncName(fn), fn.Pkg().Path()); src != "" {
					out.merge(sourceFlow(src, r.Pos(), Display(fn)))
					continue
				}
			}
			for _, arg := range c.Args {
				if arg != v {
					out.merge(fs.of(arg))
				}
			}
		}
	}
}

func sourceFlow(src string, pos token.Pos, name string) flow {
	f := flow{flags: Random, src: pos, srcName: name}
	if src == "clock" {
		f.flags = Clock
	}
	return f
}

// call is the flow of a call's results.
func (fs *flows) call(c *ssa.CallCommon, pos token.Pos) flow {
	var out flow
	if fn, _ := calleeFunc(c); fn != nil {
		name := FuncName(fn)
		if fn.Pkg() != nil {
			if src := fs.a.cat.Unstable(name, fn.Pkg().Path()); src != "" {
				return sourceFlow(src, pos, Display(fn))
			}
		}
		if cut, ok := clockCut(name, c); ok {
			recv := fs.of(ArgAt(c, 0))
			if cut {
				return recv.bucketed()
			}
			return recv
		}
		if s := fs.a.summaryOf(fn); s != nil && (s.Result.Flags != 0 || len(s.Result.Params) > 0) {
			if s.Result.Flags != 0 {
				out.flags = s.Result.Flags
				out.src, out.srcName = pos, Display(fn)+", which returns "+s.Result.Source
			}
			for _, i := range s.Result.Params {
				g := fs.of(ArgAt(c, i))
				if i < 64 && slices.Contains(s.Result.Buckets, i) {
					g = g.bucketed()
				}
				out.merge(g)
			}
			return out
		}
	}
	for i := 0; ArgAt(c, i) != nil; i++ {
		out.merge(fs.of(ArgAt(c, i)))
	}
	return out
}

// clockCut recognises the time.Time methods that keep or cut a clock value: it reports
// ok for such a call, and cut when the result names a day or an hour (the same value all
// that time: a bucket, fine as a counter's or an episode's key).
func clockCut(name string, c *ssa.CallCommon) (cut, ok bool) {
	switch name {
	case "(time.Time).UTC", "(time.Time).Local", "(time.Time).In", "(time.Time).Add",
		"(time.Time).AddDate", "(time.Time).Unix", "(time.Time).UnixNano", "(time.Time).UnixMilli",
		"(time.Time).String", "(time.Time).Minute", "(time.Time).Second", "(time.Time).Nanosecond":
		return false, true
	case "(time.Time).Date", "(time.Time).Year", "(time.Time).Month", "(time.Time).Day",
		"(time.Time).YearDay", "(time.Time).Weekday", "(time.Time).ISOWeek", "(time.Time).Hour":
		return true, true
	case "(time.Time).Truncate":
		d, ok := constInt(ArgAt(c, 1))
		return ok && time.Duration(d) >= time.Hour, true
	case "(time.Time).Format", "(time.Time).AppendFormat":
		layout, ok := ConstString(ArgAt(c, len(c.Args)-1))
		return ok && hourLayout(layout), true
	}
	return false, false
}

// hourLayout reports whether a time layout writes nothing finer than the hour.
func hourLayout(layout string) bool {
	a := time.Date(2006, 1, 2, 15, 4, 5, 123456789, time.UTC)
	b := time.Date(2006, 1, 2, 15, 37, 49, 987654321, time.UTC)
	return a.Format(layout) == b.Format(layout)
}

// ConstString returns a string constant's value.
func ConstString(v ssa.Value) (string, bool) {
	if c, ok := v.(*ssa.Const); ok && c.Value != nil && c.Value.Kind() == constant.String {
		return constant.StringVal(c.Value), true
	}
	return "", false
}

func constInt(v ssa.Value) (int64, bool) {
	if c, ok := v.(*ssa.Const); ok && c.Value != nil && c.Value.Kind() == constant.Int {
		return constant.Int64Val(c.Value)
	}
	return 0, false
}

// binding returns the value a closure's free variable is bound to where the closure is
// made.
func binding(fv *ssa.FreeVar) ssa.Value {
	anon := fv.Parent()
	parent := anon.Parent()
	if parent == nil {
		return nil
	}
	idx := slices.Index(anon.FreeVars, fv)
	for mc := range instrs[*ssa.MakeClosure](parent) {
		if mc.Fn == anon && idx < len(mc.Bindings) {
			return mc.Bindings[idx]
		}
	}
	return nil
}

// results is the flow of a unit's results, errors left out.
func (a *analyzer) results(u *unit) flow {
	var out flow
	for ret := range instrs[*ssa.Return](u.fn) {
		for _, v := range ret.Results {
			if !types.Identical(v.Type(), types.Universe.Lookup("error").Type()) {
				out.merge(u.flows.of(v))
			}
		}
	}
	return out
}
