package model

import (
	"go/token"
	"go/types"
	"maps"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// timerLoop reports whether call sits in a loop a timer turns, a hand-written scheduler
// that does again at its next turn what failed or was not recorded as done: the innermost
// loop around a wait on a timer (a receive from time.Tick, time.After or a Ticker's or
// Timer's channel, or time.Sleep) holds the call, and goes on until stopped rather than
// over a collection or a count.
func timerLoop(f *ssa.Function, call ssa.Instruction) bool {
	for ins := range instrs[ssa.Instruction](f) {
		if timerWait(ins) {
			h, body := innermostLoop(f, ins.Block())
			if h != nil && body[call.Block()] && !iterates(h) {
				return true
			}
		}
	}
	return false
}

func timerWait(ins ssa.Instruction) bool {
	switch x := ins.(type) {
	case *ssa.UnOp:
		return x.Op == token.ARROW && timerChan(x.X)
	case *ssa.Select:
		return slices.ContainsFunc(x.States, func(st *ssa.SelectState) bool { return st.Dir == types.RecvOnly && timerChan(st.Chan) })
	case *ssa.Call:
		return callee(x) == "time.Sleep"
	}
	return false
}

func timerChan(v ssa.Value) bool {
	switch x := v.(type) {
	case *ssa.Call:
		return slices.Contains([]string{"time.Tick", "time.After"}, callee(x))
	case *ssa.UnOp:
		fa, ok := x.X.(*ssa.FieldAddr)
		return ok && x.Op == token.MUL && slices.Contains([]string{"time.Ticker", "time.Timer"}, typeName(fa.X.Type()))
	}
	return false
}

// callee returns the full name of the function call reaches statically, or "".
func callee(call ssa.CallInstruction) string {
	if fn, _ := calleeFunc(call.Common()); fn != nil && fn.Pkg() != nil {
		return FuncName(fn)
	}
	return ""
}

// innermostLoop returns the header and blocks of the smallest natural loop holding b: a
// back edge's target h, and every block reaching the edge's source without passing h.
func innermostLoop(f *ssa.Function, b *ssa.BasicBlock) (*ssa.BasicBlock, map[*ssa.BasicBlock]bool) {
	header, best := (*ssa.BasicBlock)(nil), map[*ssa.BasicBlock]bool(nil)
	for _, src := range f.Blocks {
		for _, h := range src.Succs {
			if !h.Dominates(src) {
				continue
			}
			if body := loopOf(h, src); body[b] && (best == nil || len(body) < len(best)) {
				header, best = h, body
			}
		}
	}
	return header, best
}

// loopOf returns the blocks of the back edge src→h's loop: h, and every block reaching src
// without passing h.
func loopOf(h, src *ssa.BasicBlock) map[*ssa.BasicBlock]bool {
	body, stack := map[*ssa.BasicBlock]bool{h: true}, []*ssa.BasicBlock{src}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !body[x] {
			body[x] = true
			stack = append(stack, x.Preds...)
		}
	}
	return body
}

// loops returns f's natural loops: each back edge's target, with the blocks of all its
// back edges' loops.
func loops(f *ssa.Function) map[*ssa.BasicBlock]map[*ssa.BasicBlock]bool {
	out := map[*ssa.BasicBlock]map[*ssa.BasicBlock]bool{}
	for _, src := range f.Blocks {
		for _, h := range src.Succs {
			if h.Dominates(src) {
				body := loopOf(h, src)
				maps.Copy(body, out[h])
				out[h] = body
			}
		}
	}
	return out
}

// iterates reports whether the loop headed by h goes over a collection or counts: its test
// comes from a range's next element (of a map, or of a channel of work) or orders numbers.
func iterates(h *ssa.BasicBlock) bool {
	ifs, ok := h.Instrs[len(h.Instrs)-1].(*ssa.If)
	var test func(v ssa.Value, depth int) bool
	test = func(v ssa.Value, depth int) bool {
		switch x := v.(type) {
		case *ssa.Extract:
			_, isNext := x.Tuple.(*ssa.Next)
			recv, isRecv := x.Tuple.(*ssa.UnOp)
			return isNext || isRecv && recv.Op == token.ARROW && !timerChan(recv.X)
		case *ssa.BinOp:
			lr := x.Op == token.LAND || x.Op == token.LOR
			return x.Op == token.LSS || x.Op == token.LEQ || x.Op == token.GTR || x.Op == token.GEQ ||
				lr && depth < 4 && (test(x.X, depth+1) || test(x.Y, depth+1))
		case *ssa.UnOp:
			return x.Op == token.NOT && depth < 4 && test(x.X, depth+1)
		}
		return false
	}
	return ok && test(ifs.Cond, 0)
}

// delivered returns what delivers again the message call is made for: a call of a function
// that hands over messages (catalogue: delivers) that reaches call in f, or one in a
// function enclosing f (the literal that ranges over what it handed over).
func (a *analyzer) delivered(f *ssa.Function, call ssa.Instruction) *root {
	for g, inner := f, false; g != nil; g, inner = g.Parent(), true {
		for rc := range instrs[ssa.CallInstruction](g) {
			if r := a.cat.Delivers(callee(rc)); r != nil && (inner || precedes(rc, call)) {
				return &root{what: r.Root, pos: rc.Pos()}
			}
		}
	}
	return nil
}

// precedes reports whether a path leads from a to b in their function.
func precedes(a, b ssa.Instruction) bool {
	if a.Block() != b.Block() {
		return reaches(a.Block(), b.Block(), nil)
	}
	in := a.Block().Instrs
	return slices.Index(in, a) <= slices.Index(in, b) || reaches(a.Block(), a.Block(), nil)
}
