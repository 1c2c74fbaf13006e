package model

import (
	"slices"

	"golang.org/x/tools/go/ssa"
)

// keySink checks a value that becomes an idempotency key of the kind given: one made from
// the clock or a random source is different on every attempt (ONCE002), except a clock
// cut to a day or an hour where the key is a counter's or an episode's bucket, not a
// provider's. A parameter that becomes the key makes the callers' arguments keys.
func (a *analyzer) keySink(u *unit, at ssa.Instruction, v ssa.Value, kind, what string) {
	fl := u.flows.of(v)
	for _, p := range paramList(fl.params) {
		k := KeyParam{Param: p, Kind: kind}
		if !slices.Contains(u.keys, k) {
			u.keys = append(u.keys, k)
		}
	}
	bad := fl.flags&(Clock|Random) != 0 || kind == "provider" && fl.flags&Bucket != 0
	if !bad || !a.user || a.isTest(at.Pos()) {
		return
	}
	pos := a.callStart(at.Pos())
	if slices.ContainsFunc(a.res.Keys, func(k *KeyFinding) bool { return k.Pos == pos }) {
		return
	}
	a.res.Keys = append(a.res.Keys, &KeyFinding{Pos: pos, Source: a.callStart(fl.src), What: what, From: fl.srcName, Kind: kind})
}
