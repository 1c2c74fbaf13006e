package once003

import (
	_ "embed"
	"fmt"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/model"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE003"

// Analyzer reports process-local sets used as guards, with the built-in catalogue.
var Analyzer = New(model.New(func() model.Config { return model.Config{} }))

// New returns the check reading the shared analysis m.
func New(m *analysis.Analyzer) *analysis.Analyzer {
	return model.Check(Code, doc, m, func(pass *analysis.Pass, res *model.Result, rep *ignore.Reporter) {
		for _, s := range res.Sets {
			rep.Report(analysis.Diagnostic{Pos: s.Pos, Message: fmt.Sprintf(
				"%s is checked and written as the guard of %s, which %s: a set lasts one process, so a restart or a second replica %s again; declare the promise it stands in for, and keep the set as a cache in front of it",
				s.Set, s.Effect.Via, s.Effect.What, s.Effect.What)})
		}
	})
}
