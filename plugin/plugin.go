// Package plugin is oncelint as a golangci-lint v2 module plugin.
//
// It lives in its own module so that the once module does not depend on golangci-lint's
// register package. Build a custom golangci-lint with it by writing .custom-gcl.yml beside
// your go.mod:
//
//	version: v2.15.0
//	plugins:
//	  - module: 'github.com/oncekit/once/plugin'
//	    import: 'github.com/oncekit/once/plugin'
//	    version: latest
//
// run golangci-lint custom, and enable it in .golangci.yml:
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
// golangci-lint custom resolves the plugin's requirements as any dependency's: the replace
// directive in this module's go.mod, which points the once module at the checkout beside
// it, serves this repository's tests and is ignored there. The plugin therefore builds
// from a published version whose go.mod requires a published version of the once module;
// path: ./path/to/once/plugin in place of version (a checkout) works once that
// requirement resolves.
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
	return analyzer.New(analyzer.Config{Catalogs: l.settings.Catalog}), nil
}

// GetLoadMode asks for type information: the checks need types and facts.
func (l *linter) GetLoadMode() string { return register.LoadModeTypesInfo }
