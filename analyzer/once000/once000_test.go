package once000_test

import (
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"
	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/analyzer/once000"
	"github.com/oncekit/once/generator"
	"github.com/oncekit/once/internal/directive"
)

// The analyzer's messages are the parser's, word for word: oncegen and oncelint print the
// same line for the same mistake.
func TestONCE000_SameTextAsTheParser(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	// The mistakes sit in comments, where a want comment cannot go: collect the
	// diagnostics and compare them with the parser's errors instead.
	results := analysistest.Run(quiet{}, dir, once000.Analyzer, "declared")
	fset := token.NewFileSet()
	file := filepath.Join(dir, "src", "declared", "declared.go")
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	_, errs := directive.ParseFile(fset, f)
	if len(errs) != 4 {
		t.Fatalf("parser found %d mistakes, want 4", len(errs))
	}
	got := map[string]bool{}
	for _, r := range results {
		for _, d := range r.Diagnostics {
			got[r.Pass.Fset.Position(d.Pos).String()+": "+d.Message] = true
		}
	}
	// The parser's words, then the code.
	want := map[string]bool{}
	for _, e := range errs {
		want[e.Error()+" (ONCE000)"] = true
	}
	want[file+":29:2: //oncelint:ignore ONCE001 gives no reason: say why the finding does not apply (ONCE000)"] = true
	want[file+":34:2: //oncelint:ignore names unknown check ONCE009: the checks are ONCE000 to ONCE006 (ONCE000)"] = true
	want[file+":40:1: //oncelint:read gives no reason: say why (ONCE000)"] = true
	want[file+":44:2: //oncelint:repeat is not in a function's doc comment: it declares what a function does (ONCE000)"] = true
	for line := range want {
		if !got[line] {
			t.Errorf("oncelint did not print %q", line)
		}
	}
	for line := range got {
		if !want[line] {
			t.Errorf("oncelint printed %q, which the parser did not", line)
		}
	}
}

// quiet accepts analysistest's complaints about diagnostics without want comments.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}

// A key, scope or fingerprint that does not type-check, and a signature the guard cannot
// wrap, read the same from oncelint as from oncegen: the same file:line:col, the same words.
// Both run on oncegen's golden bad inputs, each loaded once.
func TestONCE000_TypeErrorsSameLineAsOncegen(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, name := range []string{
		"key_clock", "key_random", "key_undefined", "key_unencodable", "key_literal",
		"fingerprint_unencodable", "signature_undefined", "no_context", "bad_results", "transaction_without_tx",
	} {
		patterns = append(patterns, "./testdata/generate/bad/"+name)
	}

	pkgs, err := generator.Load(generator.LoadConfig{Dir: root, Patterns: patterns})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, pkg := range pkgs {
		// One package at a time: together, their guards would share names.
		_, err := generator.Generate([]*packages.Package{pkg})
		var errs generator.Errors
		if !errors.As(err, &errs) {
			t.Fatalf("oncegen %s: %v, want directive errors", pkg.PkgPath, err)
		}
		for _, e := range errs {
			want[e.Error()] = true
		}
	}

	// oncelint prints oncegen's words followed by the code.
	got := map[string]bool{}
	for _, r := range analysistest.Run(quiet{}, root, once000.Analyzer, patterns...) {
		for _, d := range r.Diagnostics {
			msg, ok := strings.CutSuffix(d.Message, " (ONCE000)")
			if !ok {
				t.Errorf("%s: no code at the end", d.Message)
			}
			got[r.Pass.Fset.Position(d.Pos).String()+": "+msg] = true
		}
	}
	if len(want) < len(patterns) {
		t.Fatalf("oncegen found %d mistakes in %d bad packages", len(want), len(patterns))
	}
	for line := range want {
		if !got[line] {
			t.Errorf("oncegen printed %q; oncelint did not", line)
		}
	}
	for line := range got {
		if !want[line] {
			t.Errorf("oncelint printed %q; oncegen did not", line)
		}
	}
}
