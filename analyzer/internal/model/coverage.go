package model

import (
	"encoding/json"
	"sort"

	"golang.org/x/tools/go/analysis"
)

// CoverageCategory is the category of the diagnostic by which a package reports its
// coverage to the standalone driver (Config.Summary).
const CoverageCategory = "oncelint-coverage"

// Coverage is what one package saw: the effect sites of its code by class, the sites its
// promises (or keys, or declarations) cover, and the sends no catalogue entry classifies.
type Coverage struct {
	Package  string            `json:"package"`
	Analysed bool              `json:"analysed"`
	Sites    map[string]string `json:"sites,omitempty"`   // site → class
	Covered  map[string]string `json:"covered,omitempty"` // site → what covers it
	Sends    []Send            `json:"sends,omitempty"`
	// Open are the open interface calls on a repeat path; Impls the package's types whose
	// methods perform effects. The driver joins them across packages.
	Open  []Effect `json:"open,omitempty"`
	Impls []Impl   `json:"impls,omitempty"`
}

// cover records that by covers e's site, unless something already does.
func (c *Coverage) cover(e *eff, by string) {
	if _, ok := c.Covered[e.Site]; !ok && e.Site != "" && e.known() {
		c.Covered[e.Site] = by
	}
}

// coverage records the package's coverage when the driver asks for it.
func (a *analyzer) coverage(analysed bool) {
	if !a.cfg.Summary || len(a.pass.Files) == 0 {
		return
	}
	sort.Slice(a.cov.Sends, func(i, j int) bool { return a.cov.Sends[i].Site < a.cov.Sends[j].Site })
	a.cov.Package, a.cov.Analysed, a.cov.Impls = a.pass.Pkg.Path(), analysed, a.impls()
	if b, err := json.Marshal(a.cov); err == nil {
		a.res.coverage = string(b)
	}
}

// NewCoverage returns the analyzer that reports the coverage the shared analysis m
// recorded, as a diagnostic of category CoverageCategory (go vet prints only the
// diagnostics of the analyzers it was given, not of those they require).
func NewCoverage(m *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     "coverage",
		Doc:      "report what oncelint saw in each package, for the standalone driver's summary",
		Requires: []*analysis.Analyzer{m},
		Run: func(pass *analysis.Pass) (any, error) {
			if res := pass.ResultOf[m].(*Result); res.coverage != "" {
				pass.Report(analysis.Diagnostic{Pos: pass.Files[0].Package, Category: CoverageCategory, Message: res.coverage})
			}
			return nil, nil
		},
	}
}
