package once003

import (
	_ "embed"
	"fmt"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/model"
	"github.com/oncekit/once/analyzer/internal/passdoc"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE003"

// Analyzer reports process-local sets used as guards, with the built-in catalogue.
var Analyzer = New(model.New(func() model.Config { return model.Config{} }))

// New returns the check reading the shared analysis m.
func New(m *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     "once003",
		Doc:      passdoc.Extract(doc, "once003"),
		URL:      "https://pkg.go.dev/github.com/oncekit/once/analyzer/once003",
		Requires: []*analysis.Analyzer{m},
		Run: func(pass *analysis.Pass) (any, error) {
			res := pass.ResultOf[m].(*model.Result)
			rep := ignore.NewReporter(pass, res.Ignores, Code)
			for _, s := range res.Sets {
				rep.Report(analysis.Diagnostic{Pos: s.Pos, Message: fmt.Sprintf(
					"%s is checked and written as the guard of %s, which %s: a set lasts one process, so a restart or a second replica %s again; declare the promise it stands in for, and keep the set as a cache in front of it",
					s.Set, s.Effect.Via, s.Effect.What, s.Effect.What)})
			}
			rep.Finish()
			return nil, nil
		},
	}
}
