package once003

import (
	_ "embed"
	"fmt"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/passdoc"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE003"

// Analyzer reports process-local guards, with the built-in catalogue.
var Analyzer = New(effects.Analyzer)

// New returns the analyzer reading the effects computed by facts.
func New(facts *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     "once003",
		Doc:      passdoc.Extract(doc, "once003"),
		URL:      "https://pkg.go.dev/github.com/oncekit/once/analyzer/once003",
		Requires: []*analysis.Analyzer{facts},
		Run:      func(pass *analysis.Pass) (any, error) { return run(pass, facts) },
	}
}

func run(pass *analysis.Pass, facts *analysis.Analyzer) (any, error) {
	res := pass.ResultOf[facts].(*effects.Result)
	rep := ignore.NewReporter(pass, res.Ignores, Code)
	defer rep.Finish()
	for _, g := range res.LocalGuards {
		rep.Report(analysis.Diagnostic{
			Pos: g.Check.Pos(),
			End: g.Check.End(),
			Message: fmt.Sprintf("%s is checked then written as the guard of the call to %s, but it lasts one process: after a restart or on a second replica a retry %s again; declare a //once: promise and keep the %s only as a cache in front of it",
				g.Set, g.Site.Name, g.Site.What, setNoun(g.Set)),
			Related: []analysis.RelatedInformation{
				{Pos: g.Write, Message: "written here"},
				{Pos: g.Site.Call.Pos(), Message: "the effect it guards"},
			},
		})
	}
	return nil, nil
}

func setNoun(set string) string {
	for _, n := range []string{"sync.Map", "map"} {
		if strings.Contains(set, n) {
			return n
		}
	}
	return "set"
}
