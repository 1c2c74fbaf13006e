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
		if g.Insert != nil {
			rep.Report(insertDiag(g))
			continue
		}
		if g.Gate {
			rep.Report(gateDiag(g))
			continue
		}
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

// insertDiag reports a set standing as the lock around an insert.
func insertDiag(g *effects.LocalGuard) analysis.Diagnostic {
	table := g.Insert.Stmt.Table
	insert := "the insert into " + table
	if g.Insert.Via != nil {
		insert += " by " + effects.FuncName(g.Insert.Via)
	}
	return analysis.Diagnostic{
		Pos: g.Check.Pos(),
		End: g.Check.End(),
		Message: fmt.Sprintf("%s is checked then written as the lock around %s, but it lasts one process: a second replica, or this one after a restart, never saw it, and both insert; make the insert the check (INSERT .. ON CONFLICT on a unique index, declared with //once:open or //once:forever table=%s) and keep the %s only as a cache in front of it",
			g.Set, insert, table, setNoun(g.Set)),
		Related: []analysis.RelatedInformation{
			{Pos: g.Write, Message: "written here"},
			{Pos: g.Insert.Call.Pos(), Message: "the insert it guards"},
		},
	}
}

// gateDiag reports a dedupe gate: a function answering "first time" by a set its callers
// run the package's effect behind.
func gateDiag(g *effects.LocalGuard) analysis.Diagnostic {
	return analysis.Diagnostic{
		Pos: g.Check.Pos(),
		End: g.Check.End(),
		Message: fmt.Sprintf("%s is the only guard of %s against a redelivered %s: %s answers \"first time\" and its callers go on to the package's effects (the call to %s %s), but the set lasts one process: after a restart or on a second replica the same message is handled again; declare a //once: promise keyed by %s where the effect is, and keep the %s only as a cache in front of it",
			g.Set, effects.FuncName(g.Func.Obj), g.Key, effects.FuncName(g.Func.Obj), g.Site.Name, g.Site.What, g.Key, setNoun(g.Set)),
		Related: []analysis.RelatedInformation{
			{Pos: g.Write, Message: "written here"},
			{Pos: g.Site.Call.Pos(), Message: "an effect of the package behind it"},
		},
	}
}

func setNoun(set string) string {
	for _, n := range []string{"go-cache", "sync.Map", "map"} {
		if strings.Contains(set, n) {
			return n
		}
	}
	return "set"
}
