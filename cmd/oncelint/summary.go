package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// summary is the run's coverage: what the analysis saw, so that a run never ends silent.
type summary struct {
	Packages     int            `json:"packages"`
	Analysed     int            `json:"analysed"`
	Effects      int            `json:"effects"`
	ByClass      map[string]int `json:"byClass,omitempty"`
	Covered      int            `json:"covered"`
	CoveredBy    map[string]int `json:"coveredBy,omitempty"`
	Findings     int            `json:"findings"`
	ByCode       map[string]int `json:"byCode,omitempty"`
	Baselined    int            `json:"baselined,omitempty"`
	Unclassified []sendGroup    `json:"unclassified,omitempty"`
}

// sendGroup is the sends through a transport that reached it by one function: the
// catalogue line that would classify them.
type sendGroup struct {
	Func    string `json:"func"`
	Sends   int    `json:"sends"`
	Retries bool   `json:"retries,omitempty"`
	Line    string `json:"line"`
}

func (r *report) summary(_ any) *summary {
	s := &summary{ByClass: map[string]int{}, CoveredBy: map[string]int{}, ByCode: map[string]int{}, Baselined: r.baselined}
	pkgs := map[string]bool{}
	analysed := map[string]bool{}
	sites := map[string]string{}
	covered := map[string]string{}
	sends := map[string]*sendGroup{}
	seenSend := map[string]bool{}
	for _, c := range r.cover {
		pkgs[c.Package] = true
		if c.Analysed {
			analysed[c.Package] = true
		}
		for site, class := range c.Sites {
			sites[site] = class
		}
		for site, by := range c.Covered {
			if _, ok := covered[site]; !ok {
				covered[site] = by
			}
		}
		for _, snd := range c.Sends {
			if seenSend[snd.Site+snd.Boundary] {
				continue
			}
			seenSend[snd.Site+snd.Boundary] = true
			g := sends[snd.Boundary]
			if g == nil {
				g = &sendGroup{Func: snd.Boundary, Line: fmt.Sprintf(`{"func": %q, "effect": "...", "class": "..."}`, snd.Boundary)}
				sends[snd.Boundary] = g
			}
			g.Sends++
			g.Retries = g.Retries || snd.Retries
		}
	}
	s.Packages, s.Analysed, s.Effects = len(pkgs), len(analysed), len(sites)
	for site, class := range sites {
		s.ByClass[class]++
		if by, ok := covered[site]; ok {
			s.Covered++
			s.CoveredBy[by]++
		}
	}
	for _, d := range r.diags {
		s.Findings++
		s.ByCode[d.Category]++
	}
	for _, g := range sends {
		s.Unclassified = append(s.Unclassified, *g)
	}
	sort.Slice(s.Unclassified, func(i, j int) bool {
		a, b := s.Unclassified[i], s.Unclassified[j]
		if a.Sends != b.Sends {
			return a.Sends > b.Sends
		}
		return a.Func < b.Func
	})
	return s
}

// counts writes "3 (email 2, message 1)".
func counts(total int, by map[string]int) string {
	if len(by) == 0 {
		return fmt.Sprint(total)
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, by[k]))
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

func printSummary(w io.Writer, s *summary) {
	fmt.Fprintf(w, "oncelint: %d effects seen in %d packages (%d analysed for effects)", s.Effects, s.Packages, s.Analysed)
	if s.Effects > 0 {
		fmt.Fprintf(w, ": %s; %s covered by a promise, a key or a declaration", counts(s.Effects, s.ByClass), counts(s.Covered, s.CoveredBy))
	}
	fmt.Fprintf(w, "; %s findings", counts(s.Findings, s.ByCode))
	if s.Baselined > 0 {
		fmt.Fprintf(w, " (%d more in the baseline)", s.Baselined)
	}
	fmt.Fprintln(w)
	if len(s.Unclassified) == 0 {
		fmt.Fprintln(w, "oncelint: no send through a transport is left unclassified")
		return
	}
	n := 0
	for _, g := range s.Unclassified {
		n += g.Sends
	}
	fmt.Fprintf(w, "oncelint: %d sends through a transport no catalogue entry classifies; a line in oncelint.json classifies each group (or //oncelint:read on a function that only reads):\n", n)
	for _, g := range s.Unclassified {
		retries := ""
		if g.Retries {
			retries = ", sent again on failure"
		}
		fmt.Fprintf(w, "  %d through %s%s: %s\n", g.Sends, g.Func, retries, g.Line)
	}
}
