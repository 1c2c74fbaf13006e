package generator_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/oncekit/once/generator"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// root is the module root, where the golden cases live under testdata/.
func root(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func generate(t testing.TB, dir string, patterns ...string) (*generator.Result, error) {
	t.Helper()
	pkgs, err := generator.Load(generator.LoadConfig{Dir: dir, Patterns: patterns})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return generator.Generate(pkgs)
}

func TestGolden_Kinds(t *testing.T) {
	res, err := generate(t, root(t), "./testdata/generate/kinds")
	if err != nil {
		t.Fatal(err)
	}
	for path, src := range res.Files {
		if *update {
			os.WriteFile(path, src, 0o644)
			continue
		}
		want, _ := os.ReadFile(path)
		if string(want) != string(src) {
			t.Errorf("%s differs", path)
		}
	}
}
