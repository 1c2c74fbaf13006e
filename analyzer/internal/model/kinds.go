package model

import "github.com/oncekit/once/internal/directive"

// Covers reports whether a promise of kind k covers the effects called under it, as the
// table of kinds in package directive says: a request memo lasts one request, so it does not.
func Covers(k directive.Kind) bool {
	s := directive.SpecOf(k)
	return s != nil && s.CoversEffects
}

// HoldsPaidEffect reports whether a promise of kind k may wrap a paid effect.
func HoldsPaidEffect(k directive.Kind) bool {
	s := directive.SpecOf(k)
	return s != nil && s.MayWrapPaidEffect
}
