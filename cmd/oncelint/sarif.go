package main

import (
	"flag"
	"fmt"
	"go/token"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/analyzer"
	"github.com/oncekit/once/internal/sarif"
)

// runSARIF loads and checks the packages as the standalone driver does (every package from
// source, tests included unless -test=false) and writes one SARIF log to stdout. It returns
// the exit status: 0 clean, 1 on errors, 3 with findings.
func runSARIF(args []string, stdout, stderr io.Writer) int {
	checks := analyzer.Analyzers
	fs := flag.NewFlagSet("oncelint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Bool("sarif", true, "write findings as SARIF 2.1.0")
	tests := fs.Bool("test", true, "also check test files")
	if v := analyzer.CatalogFlag(checks); v != nil {
		fs.Var(v, "catalog", "extra provider catalogue `files` (comma-separated or repeated), resolved from the module root")
	}
	enable := map[string]*string{}
	for _, a := range checks {
		v := new(string)
		enable[a.Name] = v
		fs.Func(a.Name, "enable "+a.Name+" (or =false to disable it)", func(s string) error {
			if s != "true" && s != "false" {
				return fmt.Errorf("want true or false, got %q", s)
			}
			*v = s
			return nil
		})
	}
	// -onceNNN alone means true, as with the other drivers' boolean flags.
	var norm []string
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			norm = append(norm, args[i:]...)
			break
		}
		if _, ok := enable[strings.TrimLeft(a, "-")]; ok {
			a += "=true"
		}
		norm = append(norm, a)
	}
	if err := fs.Parse(norm); err != nil {
		return 1
	}
	checks = selectChecks(checks, enable)

	cfg := &packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Tests: *tests}
	pkgs, err := packages.Load(cfg, fs.Args()...)
	if err == nil && len(pkgs) == 0 {
		err = fmt.Errorf("%s matched no packages", strings.Join(fs.Args(), " "))
	}
	if err != nil {
		fmt.Fprintf(stderr, "oncelint: %v\n", err)
		return 1
	}
	code := 0
	if packages.PrintErrors(pkgs) > 0 {
		code = 1
	}
	graph, err := checker.Analyze(checks, pkgs, nil)
	if err != nil {
		fmt.Fprintf(stderr, "oncelint: %v\n", err)
		return 1
	}

	var findings []sarif.Finding
	seen := map[string]bool{}
	for _, act := range graph.Roots {
		if act.Err != nil {
			fmt.Fprintf(stderr, "oncelint: %s: %s: %v\n", act.Package.PkgPath, act.Analyzer.Name, act.Err)
			code = 1
			continue
		}
		fset := act.Package.Fset
		for _, d := range act.Diagnostics {
			f := sarif.Finding{
				RuleID:   ruleID(act.Analyzer, d),
				Message:  d.Message,
				Position: span(fset, d.Pos, d.End),
			}
			for _, r := range d.Related {
				f.Related = append(f.Related, sarif.Related{Position: span(fset, r.Pos, r.End), Message: r.Message})
			}
			// A package and its test variant report the findings of shared files twice.
			k := fmt.Sprintf("%s:%d:%d %s %s", f.File, f.Line, f.Column, f.RuleID, f.Message)
			if !seen[k] {
				seen[k] = true
				findings = append(findings, f)
			}
		}
	}
	if err := sarif.Write(stdout, "oncelint", version(), infoURI, moduleRoot(pkgs), rules(), findings); err != nil {
		fmt.Fprintf(stderr, "oncelint: %v\n", err)
		return 1
	}
	if code == 0 && len(findings) > 0 {
		code = 3
	}
	return code
}

// selectChecks applies the -onceNNN flags: naming some turns on only those, turning some
// off keeps the rest.
func selectChecks(checks []*analysis.Analyzer, enable map[string]*string) []*analysis.Analyzer {
	var on, off []*analysis.Analyzer
	for _, a := range checks {
		switch *enable[a.Name] {
		case "true":
			on = append(on, a)
		case "false":
			off = append(off, a)
		}
	}
	if len(on) > 0 {
		return on
	}
	return slices.DeleteFunc(slices.Clone(checks), func(a *analysis.Analyzer) bool { return slices.Contains(off, a) })
}

// ruleID is the finding's code: its category, which each check sets to its code.
func ruleID(a *analysis.Analyzer, d analysis.Diagnostic) string {
	if strings.HasPrefix(d.Category, "ONCE") {
		return d.Category
	}
	return strings.ToUpper(a.Name)
}

func span(fset *token.FileSet, pos, end token.Pos) sarif.Position {
	p := fset.Position(pos)
	s := sarif.Position{File: p.Filename, Line: p.Line, Column: p.Column}
	if end.IsValid() && end > pos {
		e := fset.Position(end)
		s.EndLine, s.EndColumn = e.Line, e.Column
	}
	return s
}

// moduleRoot is the directory of the main module of the checked packages, against which
// the log names files.
func moduleRoot(pkgs []*packages.Package) string {
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Main && p.Module.Dir != "" {
			return p.Module.Dir
		}
	}
	wd, _ := os.Getwd()
	return wd
}

// version is the module version the command was built from, when it was built as a
// dependency, or empty.
func version() string {
	if info, ok := readBuildInfo(); ok && info != "(devel)" {
		return info
	}
	return ""
}

func readBuildInfo() (string, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	return bi.Main.Version, true
}
