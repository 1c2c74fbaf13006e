package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// join reports the open interface calls the packages recorded (calls on a repeat path
// through an interface of the module's own that no implementation in the caller's sight
// answers) against the implementations every package of the run declared: a notifier's
// retry loop that reaches, through its interface, a sender registered from a package it
// does not import. go vet alone cannot make these findings: facts flow only along imports.
//
// An implementation's effect counts when its own package did not report it already, no
// ignore covers it, and it is not fresh content (a new code each time) unless -strict. A call
// some package already reported (through the implementations it sees) is left as it is.
func (r *report) join(strict bool) {
	byPosn := map[string]*diag{}
	reported := map[string]bool{} // a call a package already reported is not reported again
	for _, d := range r.diags {
		reported[d.Posn+"\x00"+d.Category] = true
	}
	for _, c := range r.cover {
		for _, open := range c.Open {
			var sites []string
			what := ""
			for _, ic := range r.cover {
				for _, im := range ic.Impls {
					if !implements(im.Methods, open.Iface) {
						continue
					}
					for _, e := range im.Effects[open.Method] {
						if e.Site != "" && !e.Reported && !e.Ignored && (strict || !e.Fresh) {
							sites, what = append(sites, e.Site), cmp.Or(what, e.What)
						}
					}
				}
			}
			file, _, _ := strings.Cut(open.Site, ":")
			if len(sites) == 0 || reported[open.Site+"\x00ONCE001"] || (!r.tests && strings.HasSuffix(file, "_test.go")) {
				continue
			}
			d := byPosn[open.Site]
			if d == nil {
				d = &diag{Posn: open.Site, End: open.Site, Category: "ONCE001", pkg: c.Package, check: "once001"}
				impls := "an implementation in a package it does not import performs effects"
				if len(sites) > 1 {
					impls = fmt.Sprintf("%d implementations in packages it does not import perform effects", len(sites))
				}
				d.Message = fmt.Sprintf("call of %s %s with no //once: promise, on a path that runs it again: a repeat %s again; declare a promise on %s, or on the call: %s (ONCE001)",
					open.Via, what, what, open.Func, impls)
				for _, s := range sites {
					d.Related = append(d.Related, related{Posn: s, End: s, Message: "an implementation's effect"})
				}
				byPosn[open.Site] = d
				r.diags = append(r.diags, d)
			}
			if open.RepeatAt != "" {
				d.Related = mergeRelated(d.Related, []related{{Posn: open.RepeatAt, End: open.RepeatAt, Message: "runs it again: " + open.Repeat}})
			}
		}
	}
	slices.SortStableFunc(r.diags, func(a, b *diag) int {
		if lessPosn(a.Posn, b.Posn) {
			return -1
		}
		if lessPosn(b.Posn, a.Posn) {
			return 1
		}
		return 0
	})
}

// implements reports whether a method set (sorted) holds every method of an interface.
func implements(methods, iface []string) bool {
	for _, m := range iface {
		if _, ok := slices.BinarySearch(methods, m); !ok {
			return false
		}
	}
	return true
}
