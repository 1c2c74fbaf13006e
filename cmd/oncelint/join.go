package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer"
)

// join reports the open interface calls the packages recorded (calls on a repeat path, or
// anywhere with -strict, through an interface of the module's own that no implementation in
// the caller's sight answers) against the implementations the run's packages declared: a
// notifier's retry loop that reaches, through its interface, a sender registered from a
// package it does not import. go vet alone cannot make these findings: facts flow only along
// imports.
//
// An implementation's effect counts when its own package did not report it already, no
// ignore covers it, it is not fresh content (a new code each time) unless -strict, and,
// for a request no catalogue entry classifies, when the call's repeat is a retry. A call
// some package already reported (through the implementations it sees) is left as it is.
func (r *report) join(strict bool) {
	reported := map[string]bool{} // a call a package already reported is not reported again
	for _, d := range r.diags {
		reported[d.Posn+"\x00"+d.Category] = true
	}
	type joined struct {
		d       *diag
		repeats []related
	}
	var found []*joined
	bySite := map[string]*joined{}
	for _, c := range r.cover {
		for _, open := range c.Open {
			file, _, _ := strings.Cut(open.Site, ":")
			if reported[open.Site+"\x00ONCE001"] || (!r.tests && strings.HasSuffix(file, "_test.go")) {
				continue
			}
			j := bySite[open.Site]
			if j == nil {
				d := &diag{Posn: open.Site, End: open.Site, Category: "ONCE001", pkg: c.Package, check: "once001"}
				sites, types, what, request := r.implementationSites(open, strict)
				if len(sites) == 0 {
					continue
				}
				impls := "an implementation in a package it does not import performs effects"
				if types > 1 {
					impls = fmt.Sprintf("%d implementations in packages it does not import perform effects", types)
				}
				if open.Repeat == "" {
					d.Message = fmt.Sprintf("call of %s %s with no //once: promise (-strict): declare a promise on %s, or on the call: %s (ONCE001)",
						open.Via, what, open.Func, impls)
				} else {
					d.Message = fmt.Sprintf("call of %s %s with no //once: promise, on a path that runs it again: a repeat %s again; declare a promise on %s, or on the call: %s (ONCE001)",
						open.Via, what, what, open.Func, impls)
				}
				if request {
					d.Message = strings.TrimSuffix(d.Message, " (ONCE001)") + ", or " + analyzer.RequestFix + " (ONCE001)"
				}
				for _, s := range sites {
					d.Related = append(d.Related, related{Posn: s, End: s, Message: "an implementation's effect"})
				}
				j = &joined{d: d}
				bySite[open.Site] = j
				found = append(found, j)
			}
			if open.RepeatAt != "" {
				j.repeats = mergeRelated(j.repeats, []related{{Posn: open.RepeatAt, End: open.RepeatAt, Message: "runs it again: " + open.Repeat}})
			}
		}
	}
	for _, j := range found {
		j.d.Related = append(j.repeats, j.d.Related...) // the repeats first, as the vet pass lists them
		r.diags = append(r.diags, j.d)
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

// implementationSites returns the sites of the effects the open call's method performs in
// the run's implementations of its interface, how many implementations make them, what
// the first one does, and whether that is a request no catalogue entry classifies.
func (r *report) implementationSites(open analyzer.Effect, strict bool) (sites []string, types int, what string, request bool) {
	for _, c := range r.cover {
		for _, im := range c.Impls {
			if !implements(im.Methods, open.Iface) {
				continue
			}
			n := len(sites)
			for _, e := range im.Effects[open.Method] {
				if e.Site != "" && !e.Reported && !e.Ignored && (strict || !e.Fresh) && (e.Class != analyzer.RequestClass || open.Retried) {
					if what == "" {
						request = e.Class == analyzer.RequestClass
					}
					sites, what = append(sites, e.Site), cmp.Or(what, e.What)
				}
			}
			if len(sites) > n {
				types++
			}
		}
	}
	return sites, types, what, request
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

// toolFlags reads, from the flags passed on to the vet tool, the final -strict and whether
// ONCE001 runs, as the tool decides it: naming any check =true runs only those named, and
// =false turns one off.
func toolFlags(tool []string) (strict, once001 bool) {
	vals := map[string]bool{}
	for _, f := range tool {
		name, v, _ := strings.Cut(strings.TrimPrefix(f, "-"), "=")
		if b, err := strconv.ParseBool(v); err == nil {
			vals[name] = b
		}
	}
	chosen := slices.ContainsFunc(analyzer.Analyzers, func(a *analysis.Analyzer) bool { return vals[a.Name] })
	on, set := vals["once001"]
	return vals["strict"], on || !chosen && !set
}
