package once001

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
const Code = "ONCE001"

// Analyzer reports effects that run again with no promise, with the built-in catalogue.
var Analyzer = New(model.New(func() model.Config { return model.Config{} }))

// New returns the check reading the shared analysis m.
func New(m *analysis.Analyzer) *analysis.Analyzer {
	return model.Check(Code, doc, m, func(pass *analysis.Pass, res *model.Result, rep *ignore.Reporter) {
		for _, p := range res.Sites {
			rep.Use(p)
		}
		for _, f := range res.Findings {
			rep.Report(diagnostic(f))
		}
	})
}

func diagnostic(f *model.Finding) analysis.Diagnostic {
	e := f.Effect
	key := ""
	if e.KeyField != "" || e.KeySetter != "" {
		key = " and no idempotency key"
	}
	d := analysis.Diagnostic{Pos: f.Pos}
	if f.Strict {
		d.Message = fmt.Sprintf("call of %s %s with no //once: promise%s (-strict): declare a promise on %s", e.Via, e.What, key, e.Func)
	} else {
		d.Message = fmt.Sprintf("call of %s %s with no //once: promise%s, on a path that runs it again: a repeat %s again; declare a promise on %s",
			e.Via, e.What, key, e.What, e.Func)
	}
	if len(e.Impls) > 0 {
		d.Message += fmt.Sprintf(", or on the call: its implementations perform %d effects", len(e.Impls))
	}
	if e.Class == model.RequestClass {
		d.Message += ", or " + model.RequestFix
	}
	for _, r := range f.Repeats {
		d.Related = append(d.Related, analysis.RelatedInformation{Pos: r.Pos, Message: "runs it again: " + r.What})
	}
	if f.MadePos.IsValid() {
		d.Related = append(d.Related, analysis.RelatedInformation{Pos: f.MadePos, Message: "the effect is made here, with what the call gives"})
	}
	for _, u := range f.Unrelated {
		d.Related = append(d.Related, analysis.RelatedInformation{Pos: f.Pos, Message: u + " does not cover it: its key is unrelated to what the effect sends"})
	}
	for _, p := range f.ImplPos {
		d.Related = append(d.Related, analysis.RelatedInformation{Pos: p, Message: "an implementation's effect"})
	}
	return d
}
