// Package linttest runs oncelint's checks over real packages of this module from a test and
// returns what they find, so a test can assert the exact findings on code written to have
// them (the examples' naive twins) and the absence of findings on code written not to.
package linttest

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/analyzer"
)

// Finding is one diagnostic, reduced to what a test asserts.
type Finding struct {
	Code    string // the check's code, e.g. "ONCE003"
	File    string // the file's base name
	Line    int
	Message string
}

// String formats a finding as "file.go:12: ONCE003", the form tests compare.
func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Code) }

// Run loads the packages matching patterns from dir (tests included, as oncelint sees them
// under go vet) and runs every check with the built-in catalogue. It fails t when a package
// does not load or type-check, and returns the findings sorted by file and line.
func Run(t testing.TB, dir string, patterns ...string) []Finding {
	t.Helper()
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: dir, Tests: true}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatalf("linttest: loading %v: %v", patterns, err)
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		t.Fatalf("linttest: %d errors loading %v", n, patterns)
	}
	graph, err := checker.Analyze(analyzer.Analyzers, pkgs, nil)
	if err != nil {
		t.Fatalf("linttest: analysing %v: %v", patterns, err)
	}
	seen := map[Finding]bool{}
	var out []Finding
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		if act.Err != nil {
			t.Fatalf("linttest: %s: %v", act, act.Err)
		}
		for _, d := range act.Diagnostics {
			posn := act.Package.Fset.Position(d.Pos)
			f := Finding{Code: d.Category, File: filepath.Base(posn.Filename), Line: posn.Line, Message: d.Message}
			// A package and its test variant are analysed separately: report a finding once.
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Code < b.Code
	})
	return out
}

// Strings returns the findings in their String form, for comparing with a want list.
func Strings(findings []Finding) []string {
	s := make([]string, len(findings))
	for i, f := range findings {
		s[i] = f.String()
	}
	return s
}
