package once000

import (
	_ "embed"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/model"
	"github.com/oncekit/once/internal/directive"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE000"

// Analyzer reports malformed directives, with the built-in catalogue.
var Analyzer = New(model.New(func() model.Config { return model.Config{} }))

// New returns the check reading the directives parsed by the shared analysis m.
func New(m *analysis.Analyzer) *analysis.Analyzer {
	a := model.Check(Code, doc, m, func(pass *analysis.Pass, res *model.Result, rep *ignore.Reporter) {
		for _, e := range res.DirectiveErrors {
			rep.Report(analysis.Diagnostic{Pos: e.Pos, Message: e.Msg})
		}
		// The well-formed directives are checked against the package's types by the
		// function oncegen uses: a key that does not type-check reads the same from both.
		for _, d := range res.Directives {
			_, errs := directive.CheckTypes(pass.Fset, pass.Pkg, pass.TypesInfo, d)
			for _, e := range errs {
				rep.Report(analysis.Diagnostic{Pos: e.Pos, Message: e.Msg})
			}
		}
		for _, n := range res.Notes {
			if n.Problem != "" {
				rep.Report(analysis.Diagnostic{Pos: n.Pos, Message: n.Problem})
			}
		}
		for _, ig := range res.Ignores.List {
			if ig.Problem != "" {
				// Not through rep: a malformed ignore cannot silence its own report.
				pass.Report(analysis.Diagnostic{Pos: ig.Pos, Category: Code, Message: ig.Problem + " (" + Code + ")"})
			}
		}
	})
	// A malformed directive often comes with code that does not compile yet.
	a.RunDespiteErrors = true
	return a
}
