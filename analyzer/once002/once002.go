package once002

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
const Code = "ONCE002"

// Analyzer reports keys a retry cannot reproduce, with the built-in catalogue.
var Analyzer = New(model.New(func() model.Config { return model.Config{} }))

// New returns the check reading the shared analysis m.
func New(m *analysis.Analyzer) *analysis.Analyzer {
	return model.Check(Code, doc, m, func(pass *analysis.Pass, res *model.Result, rep *ignore.Reporter) {
		for _, k := range res.Keys {
			who := "the provider does the work again"
			if k.Kind != "provider" {
				who = "the //once:" + k.Kind + " promise runs it again"
			}
			d := analysis.Diagnostic{Pos: k.Pos,
				Message: fmt.Sprintf("%s is made from %s: a retry makes a new key, and %s; derive it from a stable id", k.What, k.From, who)}
			if k.Source.IsValid() && k.Source != k.Pos {
				d.Related = []analysis.RelatedInformation{{Pos: k.Source, Message: "the key is made here"}}
			}
			rep.Report(d)
		}
	})
}
