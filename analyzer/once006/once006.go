package once006

import (
	_ "embed"
	"fmt"
	"go/token"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/passdoc"
	"github.com/oncekit/once/analyzer/internal/sqltext"
	"github.com/oncekit/once/internal/directive"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE006"

// Analyzer reports promises of the wrong length, with the built-in catalogue.
var Analyzer = New(effects.Analyzer)

// New returns the analyzer reading directives and effects from facts.
func New(facts *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     "once006",
		Doc:      passdoc.Extract(doc, "once006"),
		URL:      "https://pkg.go.dev/github.com/oncekit/once/analyzer/once006",
		Requires: []*analysis.Analyzer{facts},
		Run:      func(pass *analysis.Pass) (any, error) { return run(pass, facts) },
	}
}

func run(pass *analysis.Pass, facts *analysis.Analyzer) (any, error) {
	res := pass.ResultOf[facts].(*effects.Result)
	rep := ignore.NewReporter(pass, res.Ignores, Code)
	defer rep.Finish()
	if res.Fast {
		return nil, nil
	}
	for _, fn := range res.Funcs {
		if fn.Test {
			continue
		}
		d := fn.Directive
		for _, site := range fn.Sites {
			if site.Keyed {
				continue
			}
			if callee := res.ByObj[site.Callee]; callee != nil && callee.Directive != nil {
				continue
			}
			switch {
			case site.Guard != nil && site.Guard.Kind == string(directive.Request):
				rep.Report(requestDiag(site.Guard.Call.Pos(), "once.Request guard", site))
			case site.Guard == nil && d != nil && d.Kind == directive.Request:
				rep.Report(requestDiag(fn.Decl.Name.Pos(), "the //once:request promise on "+fn.Obj.Name(), site))
			default:
				continue
			}
			break // one finding per promise
		}
		if d != nil && d.HasTable() {
			checkTableInsert(pass, rep, fn, d)
		}
	}
	return nil, nil
}

// requestDiag reports a request-length promise at at, with the effect it wraps.
func requestDiag(at token.Pos, what string, site *effects.Site) analysis.Diagnostic {
	return analysis.Diagnostic{
		Pos: at,
		Message: fmt.Sprintf("%s lasts one request, but %s: the next request (a retry, a second tab) %s again; declare a longer promise (provider, forever, open or episode)",
			what, reaches(site), site.What),
		Related: []analysis.RelatedInformation{{Pos: site.Call.Pos(), Message: "the effect"}},
	}
}

// reaches says what the site calls: "it calls X", or "it calls F, which reaches X".
func reaches(site *effects.Site) string {
	if site.Name == site.Via {
		return "it calls " + site.Name
	}
	return "it calls " + site.Name + ", which reaches " + site.Via
}

// checkTableInsert reports inserts into the declared table without the derived clause.
func checkTableInsert(pass *analysis.Pass, rep *ignore.Reporter, fn *effects.Func, d *directive.Directive) {
	clause := d.ConflictClause()
	if clause == "" {
		return
	}
	want := strings.ToLower(sqltext.Normalize(clause))
	for _, c := range sqltext.Calls(pass.TypesInfo, fn.Decl.Body) {
		if c.Stmt.Kind != sqltext.Insert || !sqltext.SameTable(c.Stmt.Table, d.Table) {
			continue
		}
		if strings.Contains(strings.ToLower(sqltext.Normalize(c.Stmt.Text)), want) {
			continue
		}
		rep.Report(analysis.Diagnostic{
			Pos: c.Call.Pos(),
			End: c.Call.End(),
			Message: fmt.Sprintf("insert into %s does not use the conflict clause //once:%s table=%s declares: without %q, text for text, a duplicate is not the no-op the promise needs; append the generated %s constant",
				d.Table, d.Kind, d.Table, clause, directive.ConflictName(fn.Obj.Name())),
			Related: []analysis.RelatedInformation{{Pos: d.Slash, Message: "the promise is declared here"}},
		})
	}
}
