package analyzer

import (
	"flag"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/once000"
	"github.com/oncekit/once/analyzer/once001"
	"github.com/oncekit/once/analyzer/once002"
	"github.com/oncekit/once/analyzer/once003"
	"github.com/oncekit/once/analyzer/once004"
	"github.com/oncekit/once/analyzer/once005"
	"github.com/oncekit/once/analyzer/once006"
)

// Config configures a set of analyzers.
type Config struct {
	// Catalogs names files of extra provider catalogue entries, in the format of package
	// catalog. A relative name resolves from the module root of each package analysed,
	// so one setting means one file from every package directory.
	Catalogs []string
	// Schemas names files or directories holding the project's unique constraints (SQL,
	// or Go migrations and ent schema) that ONCE005 reads besides those it finds under
	// the module root; relative names resolve from the module root.
	Schemas []string
}

// Analyzers are the checks with the built-in catalogue, sharing one effects analysis.
var Analyzers = []*analysis.Analyzer{
	once000.Analyzer,
	once001.Analyzer,
	once002.Analyzer,
	once003.Analyzer,
	once004.Analyzer,
	once005.Analyzer,
	once006.Analyzer,
}

// New returns the checks configured by cfg. They share one effects analyzer, whose
// -catalog flag (see [CatalogFlag]) adds more catalogue files.
func New(cfg Config) []*analysis.Analyzer {
	facts := effects.NewAnalyzer(cfg.Catalogs)
	return []*analysis.Analyzer{
		once000.New(facts),
		once001.New(facts),
		once002.For(facts),
		once003.New(facts),
		once004.New(facts),
		once005.New(once005.Config{Schemas: cfg.Schemas}),
		once006.New(facts),
	}
}

// SchemaFlag returns ONCE005's -schema flag among checks (a comma-separated or repeated
// list of schema files and directories), so a command can offer it at the top level, or
// nil if ONCE005 is not among them.
func SchemaFlag(checks []*analysis.Analyzer) flag.Value {
	for _, a := range checks {
		if v := once005.SchemaFlag(a); v != nil {
			return v
		}
	}
	return nil
}

// CatalogFlag returns the -catalog flag of the effects analyzer the checks share (a
// comma-separated or repeated list of catalogue files), so a command can offer it at the
// top level, or nil if the checks share none.
func CatalogFlag(checks []*analysis.Analyzer) flag.Value {
	for _, a := range checks {
		for _, r := range a.Requires {
			if v := effects.CatalogFlag(r); v != nil {
				return v
			}
		}
	}
	return nil
}
