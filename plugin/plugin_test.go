package plugin_test

import (
	"path/filepath"
	"testing"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/plugin"
)

// golangci-lint finds the plugin by name, builds it from .golangci.yml's settings, and the
// catalogue setting reaches the checks.
func TestPlugin_BuildsConfiguredAnalyzers(t *testing.T) {
	t.Parallel()
	newPlugin, err := register.GetPlugin(plugin.Name)
	if err != nil {
		t.Fatal(err)
	}
	gateway, err := filepath.Abs(filepath.Join("testdata", "gateway.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(map[string]any{"catalog": []any{gateway}})
	if err != nil {
		t.Fatal(err)
	}
	if mode := p.GetLoadMode(); mode != register.LoadModeTypesInfo {
		t.Errorf("load mode %q, want %q", mode, register.LoadModeTypesInfo)
	}
	analyzers, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	if err := analysis.Validate(analyzers); err != nil {
		t.Fatal(err)
	}
	var once001 *analysis.Analyzer
	for _, a := range analyzers {
		if a.Name == "once001" {
			once001 = a
		}
	}
	if len(analyzers) != 7 || once001 == nil {
		t.Fatalf("got %d analyzers, want once000 to once006", len(analyzers))
	}
	analysistest.Run(t, analysistest.TestData(), once001, "relay")
}

func TestPlugin_RefusesBadSettings(t *testing.T) {
	t.Parallel()
	if _, err := plugin.New(map[string]any{"catalog": 5}); err == nil {
		t.Error("New accepted catalog: 5")
	}
}
