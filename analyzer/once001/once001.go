package once001

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/catalog"
	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/passdoc"
	"github.com/oncekit/once/analyzer/once002"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE001"

// Analyzer reports effects no promise covers, with the built-in catalogue.
var Analyzer = New(effects.Analyzer)

// New returns the analyzer reading the effects computed by facts (an analyzer made by
// the effects package, whose catalogue it uses).
func New(facts *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     "once001",
		Doc:      passdoc.Extract(doc, "once001"),
		URL:      "https://pkg.go.dev/github.com/oncekit/once/analyzer/once001",
		Requires: []*analysis.Analyzer{facts, once002.For(facts)},
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
	tr, _ := pass.ResultOf[once002.For(facts)].(*once002.Tracer)
	// Sites behind a process-local set are ONCE003's: one finding per mistake.
	local := map[*effects.Site]bool{}
	for _, g := range res.LocalGuards {
		for _, site := range g.Func.Sites {
			if site.Call.Pos() > g.Check.Pos() {
				local[site] = true
			}
		}
	}
	reported := map[*ast.CallExpr]bool{} // a call through an interface may reach several
	for _, fn := range res.Funcs {
		if !fn.Reports {
			continue
		}
		// One finding per function: the effects it reaches with no promise are one
		// decision, made without a promise once, and one promise declared on it covers
		// them all (the knowledge look-up and the completion that answer one message,
		// three calls of one provider method in three branches). The first is reported;
		// the others are named in the message and listed as related positions.
		var sites []*effects.Site
		for _, site := range fn.Sites {
			if !site.Unguarded() || local[site] || reported[site.Call] {
				continue
			}
			if callee := res.ByObj[site.Callee]; site.Reported || callee != nil && (callee.Reports || callee.Settled) {
				continue // reported inside the callee
			}
			reported[site.Call] = true
			sites = append(sites, site)
		}
		if len(sites) == 0 || resent(pass.TypesInfo, tr, res, fn, sites) {
			continue
		}
		d := diagnostic(res, fn, sites[0])
		var others []string
		for _, other := range sites[1:] {
			if other.Name != sites[0].Name && !slices.Contains(others, other.Name) {
				others = append(others, other.Name)
			}
			d.Related = append(d.Related, analysis.RelatedInformation{Pos: other.Call.Pos(), End: other.Call.End(), Message: "another call of " + other.Name + " in " + funcName(fn.Obj)})
		}
		if len(others) > 0 {
			d.Message += "; " + funcName(fn.Obj) + " also calls " + strings.Join(others, ", ") + " with no promise, which the same promise covers"
		}
		rep.Report(d)
	}
	return nil, nil
}

func diagnostic(res *effects.Result, fn *effects.Func, site *effects.Site) analysis.Diagnostic {
	name := funcName(fn.Obj)
	d := analysis.Diagnostic{Pos: site.Call.Pos(), End: site.Call.End()}
	switch {
	case site.Effect != nil && site.Effect.Key != nil:
		d.Message = fmt.Sprintf("call to %s has no idempotency key and no //once: promise: a retry %s again; %s from a stable id, or declare a promise on %s",
			site.Name, site.What, keyHint(site), name)
	case site.Effect != nil:
		d.Message = fmt.Sprintf("call to %s has no //once: promise and the provider takes no idempotency key: a retry %s again; declare a promise on %s",
			site.Name, site.What, name)
	default:
		d.Message = fmt.Sprintf("call to %s reaches %s%s with no //once: promise: a retry %s again; declare a promise on %s or on %s",
			site.Name, site.Via, through(site), site.What, name, site.Name)
		if site.Callee != nil && site.Callee.Pos().IsValid() {
			d.Related = append(d.Related, analysis.RelatedInformation{Pos: site.Callee.Pos(), Message: site.Name + " is declared here"})
		}
		// Each step of the chain inside the package, down to the provider call.
		steps := 0
		for f := res.ByObj[site.Callee]; f != nil && f.Via() != nil && steps < 16; steps++ {
			v := f.Via()
			if v.Effect != nil {
				d.Related = append(d.Related, analysis.RelatedInformation{Pos: v.Call.Pos(), Message: "the call of " + site.Via})
				break
			}
			d.Related = append(d.Related, analysis.RelatedInformation{Pos: v.Call.Pos(), Message: funcName(f.Obj) + " calls " + v.Name})
			f = res.ByObj[v.Callee]
		}
	}
	return d
}

// through names the functions a call goes through on its way to the provider call after
// the one it calls: " (through (*mailer.Mailer).Send)".
func through(site *effects.Site) string {
	if len(site.Chain) == 0 {
		return ""
	}
	return " (through " + strings.Join(site.Chain, ", then ") + ")"
}

// keyHint says how this provider takes its key.
func keyHint(site *effects.Site) string {
	k := site.Effect.Key
	switch {
	case k.Header != "" && site.Effect.Class == catalog.HTTP:
		return "set an " + k.Header + " header on the request, derived"
	case k.Header != "":
		return "send an " + k.Header + " header (option.WithHeader) derived"
	case k.Setter != "":
		return "set " + k.Field + " (or call " + k.Setter + ")"
	default:
		return "set " + k.Field
	}
}

// funcName names a function of the package for messages: F or T.M.
func funcName(fn *types.Func) string {
	if recv := fn.Signature().Recv(); recv != nil {
		t := types.TypeString(recv.Type(), func(*types.Package) string { return "" })
		return strings.TrimPrefix(t, "*") + "." + fn.Name()
	}
	return fn.Name()
}
