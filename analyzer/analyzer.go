package analyzer

import (
	"flag"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/model"
	"github.com/oncekit/once/analyzer/once000"
	"github.com/oncekit/once/analyzer/once001"
	"github.com/oncekit/once/analyzer/once002"
	"github.com/oncekit/once/analyzer/once003"
	"github.com/oncekit/once/analyzer/once004"
	"github.com/oncekit/once/analyzer/once005"
	"github.com/oncekit/once/analyzer/once006"
)

// Config configures a set of checks. They read it when they run, so a command can bind
// flags to it before parsing them.
type Config struct {
	// Catalogs names catalogue files beyond the built-in one and the module root's
	// oncelint.json (see package catalog); a relative name resolves from the module root.
	Catalogs []string
	// Schemas names files or directories holding the project's unique constraints that
	// ONCE005 reads besides those it finds under the module root.
	Schemas []string
	// Strict reports every catalogued effect no promise covers, on a repeat path or not:
	// for code that has adopted once.
	Strict bool
	// Summary makes each package report its coverage as a diagnostic of category
	// CoverageCategory, which the standalone driver gathers into the run's summary.
	Summary bool
}

// CoverageCategory is the category of the coverage diagnostics Config.Summary asks for.
const CoverageCategory = model.CoverageCategory

// Coverage is what a coverage diagnostic's message holds, as JSON: the effect sites of a
// package's code by class, the sites its promises, keys and declarations cover, and the
// sends through a transport that no catalogue entry classifies.
type Coverage = model.Coverage

// Effect is one effect, or open interface call, a Coverage lists.
type Effect = model.Effect

// RequestClass is the class of an Effect that is a POST or PATCH no catalogue entry
// classifies, a finding only where the module's own code retries it; RequestFix is the fix
// such a finding names.
const RequestClass, RequestFix = model.RequestClass, model.RequestFix

// Analyzers are the checks with the built-in catalogue.
var Analyzers = New(&Config{})

// New returns the checks configured by cfg, sharing one analysis.
func New(cfg *Config) []*analysis.Analyzer { return NewCommand(cfg)[:7] }

// NewCommand returns the checks configured by cfg and, last, the analyzer that reports
// each package's coverage when Summary is set: what oncelint runs under go vet.
func NewCommand(cfg *Config) []*analysis.Analyzer {
	m := model.New(func() model.Config {
		return model.Config{Catalogs: cfg.Catalogs, Strict: cfg.Strict, Summary: cfg.Summary}
	})
	return []*analysis.Analyzer{
		once000.New(m),
		once001.New(m),
		once002.New(m),
		once003.New(m),
		once004.New(m),
		once005.New(once005.Config{Schemas: cfg.Schemas}),
		once006.New(m),
		model.NewCoverage(m),
	}
}

// RegisterFlags binds the configuration's flags in fs: -catalog, -strict and -summary
// (for the standalone driver), and ONCE005's -schema among checks.
func (cfg *Config) RegisterFlags(fs *flag.FlagSet, checks []*analysis.Analyzer) {
	fs.Func("catalog", "extra catalogue `files` (comma-separated or repeated), resolved from the module root", func(s string) error {
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				cfg.Catalogs = append(cfg.Catalogs, f)
			}
		}
		return nil
	})
	fs.BoolVar(&cfg.Strict, "strict", false, "report every catalogued effect no promise covers, on a repeat path or not")
	fs.BoolVar(&cfg.Summary, "summary", false, "report each package's coverage for the standalone driver's summary")
	for _, a := range checks {
		if v := once005.SchemaFlag(a); v != nil {
			fs.Var(v, "schema", "schema `files` or directories with unique constraints (comma-separated or repeated), besides those found under the module root")
		}
	}
}
