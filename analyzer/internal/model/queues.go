package model

import (
	"cmp"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// queueField names the channel field v is loaded from (the type and the field), or "".
func queueField(v ssa.Value) string {
	if load, ok := v.(*ssa.UnOp); ok && load.Op == token.MUL {
		if fa, ok := load.X.(*ssa.FieldAddr); ok && typeName(fa.X.Type()) != "" {
			if p, ok := fa.X.Type().Underlying().(*types.Pointer); ok {
				if st, ok := p.Elem().Underlying().(*types.Struct); ok { // not a type parameter's
					return typeName(fa.X.Type()) + "." + st.Field(fa.Field).Name()
				}
			}
		}
	}
	return ""
}

// workerQueue returns the queue f receives from in a loop, or "": f is a worker, and what
// it does for each value is done once per value sent on that field's channel, by the
// functions that send, not by the one that starts it.
func workerQueue(f *ssa.Function) string {
	for ins := range instrs[ssa.Instruction](f) {
		var chans []ssa.Value
		if x, ok := ins.(*ssa.UnOp); ok && x.Op == token.ARROW {
			chans = append(chans, x.X)
		} else if x, ok := ins.(*ssa.Select); ok {
			for _, st := range x.States {
				chans = append(chans, st.Chan)
			}
		}
		for _, ch := range chans {
			if q := queueField(ch); q != "" {
				if h, _ := innermostLoop(f, ins.Block()); h != nil {
					return q
				}
			}
		}
	}
	return ""
}

// started returns the functions f starts with go.
func started(f *ssa.Function) (out []*ssa.Function) {
	for g := range instrs[*ssa.Go](f) {
		if g.Call.StaticCallee() != nil {
			out = append(out, g.Call.StaticCallee())
		}
	}
	return out
}

// startsWorker reports whether fn or its literals start a worker.
func startsWorker(fn *ssa.Function) bool {
	return slices.ContainsFunc(withLiterals(fn), func(f *ssa.Function) bool {
		return slices.ContainsFunc(started(f), func(g *ssa.Function) bool { return workerQueue(g) != "" })
	})
}

// sendOn adds to the unit what the workers of a queue do with the value sent.
func (a *analyzer) sendOn(u *unit, f *ssa.Function, s *ssa.Send, c *ctx) {
	q := queueField(s.Chan) // no worker's queue is "": a send on any other channel adds nothing
	for _, e := range a.queued[q] {
		ne := *e // made here, where the value is sent, with the worker's call related
		ne.Site, ne.pos, ne.Func, ne.Via, ne.Made = a.posString(s.Pos()), s.Pos(), Display(u.obj), "the worker of "+q, cmp.Or(e.Made, e.Site)
		ne.params = u.flows.of(s.X).params
		a.site(&ne)
		a.addEffect(u, f, s, c, &ne)
	}
}
