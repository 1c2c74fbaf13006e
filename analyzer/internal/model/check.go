package model

import (
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/passdoc"
)

// Check returns the analyzer of the check of code (ONCE001 is once001), documented by doc,
// that reads the shared analysis m and reports through the package's ignores what report
// finds in m's result.
func Check(code, doc string, m *analysis.Analyzer, report func(*analysis.Pass, *Result, *ignore.Reporter)) *analysis.Analyzer {
	name := strings.ToLower(code)
	return &analysis.Analyzer{
		Name:     name,
		Doc:      passdoc.Extract(doc, name),
		URL:      "https://pkg.go.dev/github.com/oncekit/once/analyzer/" + name,
		Requires: []*analysis.Analyzer{m},
		Run: func(pass *analysis.Pass) (any, error) {
			res := pass.ResultOf[m].(*Result)
			rep := ignore.NewReporter(pass, res.Ignores, code)
			report(pass, res, rep)
			rep.Finish()
			return nil, nil
		},
	}
}
