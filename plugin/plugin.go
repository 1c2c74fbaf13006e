// Package plugin is oncelint as a golangci-lint v2 module plugin.
//
// It is a package of the once module, so golangci-lint custom builds it from a published
// version or from a checkout alike. Write .custom-gcl.yml beside your go.mod:
//
//	version: v2.15.0
//	plugins:
//	  - module: 'github.com/oncekit/once'
//	    import: 'github.com/oncekit/once/plugin'
//	    version: latest
//
// (or path: ./path/to/a/checkout of once in place of version), run golangci-lint custom,
// and enable it in .golangci.yml:
//
//	version: "2"
//	linters:
//	  enable:
//	    - oncelint
//	  settings:
//	    custom:
//	      oncelint:
//	        type: module
//	        description: effects without a promise, unstable keys, process-local guards
//	        settings:
//	          catalog:
//	            - oncelint.json
//
// catalog names extra provider catalogue files (see package
// github.com/oncekit/once/analyzer/catalog), resolved from the module root.
// Findings carry their code (ONCE001, ...) at the end of the message; //nolint:oncelint
// silences golangci-lint's report, and //oncelint:ignore ONCE00N reason works as with
// oncelint itself.
//
// golangci-lint custom resolves the plugin's requirements as any dependency's, ignoring
// replace directives: a plugin in a module of its own that required the once module
// through a replace could only be built from published versions of both. Its one
// requirement of its own, golangci-lint's small register module, is therefore in the
// once module's go.mod. The test TestGolangciCustom_ReportsTheNaiveTwins builds a
// golangci-lint with golangci-lint custom from this checkout and runs it on the
// examples' naive twins.
package plugin

import (
	"fmt"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer"
)

// Name is the linter's name in .golangci.yml.
const Name = "oncelint"

// golangci-lint finds module plugins by the registration their package makes when it is
// imported into the custom binary: an init function is the plugin API's only entry point.
func init() { register.Plugin(Name, New) }

// Settings are the plugin's settings in .golangci.yml.
type Settings struct {
	// Catalog names extra provider catalogue files.
	Catalog []string `json:"catalog"`
}

type linter struct{ settings Settings }

// New builds the plugin from its settings.
func New(settings any) (register.LinterPlugin, error) {
	s, err := register.DecodeSettings[Settings](settings)
	if err != nil {
		return nil, fmt.Errorf("oncelint: settings: %w", err)
	}
	return &linter{settings: s}, nil
}

// BuildAnalyzers returns the checks, sharing one catalogue.
func (l *linter) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return analyzer.New(&analyzer.Config{Catalogs: l.settings.Catalog}), nil
}

// GetLoadMode asks for type information: the checks need types and facts.
func (l *linter) GetLoadMode() string { return register.LoadModeTypesInfo }
