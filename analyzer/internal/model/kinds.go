package model

import "github.com/oncekit/once/internal/directive"

// kindSpec is what the analyzer decides by a promise's kind.
type kindSpec struct {
	// Covers: a promise of this kind covers the effects called under it.
	Covers bool
	// HoldsPaidEffect: a promise of this kind may wrap a paid effect.
	HoldsPaidEffect bool
}

// kinds is the analyzer's one table of per-kind decisions: a request memo lasts one
// request, so it neither covers what it wraps nor may wrap a paid effect.
var kinds = map[directive.Kind]kindSpec{
	directive.Request:     {Covers: false, HoldsPaidEffect: false},
	directive.Transaction: {Covers: true, HoldsPaidEffect: true},
	directive.Lease:       {Covers: true, HoldsPaidEffect: true},
	directive.Open:        {Covers: true, HoldsPaidEffect: true},
	directive.Episode:     {Covers: true, HoldsPaidEffect: true},
	directive.Statement:   {Covers: true, HoldsPaidEffect: true},
	directive.Provider:    {Covers: true, HoldsPaidEffect: true},
	directive.Forever:     {Covers: true, HoldsPaidEffect: true},
}

// Covers reports whether a promise of kind k covers the effects called under it.
func Covers(k directive.Kind) bool { return kinds[k].Covers }

// HoldsPaidEffect reports whether a promise of kind k may wrap a paid effect.
func HoldsPaidEffect(k directive.Kind) bool { return kinds[k].HoldsPaidEffect }
