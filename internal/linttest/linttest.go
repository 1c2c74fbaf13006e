// Package linttest runs oncelint over real packages of this module from a test and returns
// what it finds, so a test can assert the exact findings on code written to have them (the
// examples' naive twins) and the absence of findings on code written not to.
//
// It runs the oncelint command itself, the module's tool (go tool oncelint, built once
// into the build cache and shared by every test binary), rather than the analyzers
// in-process: the findings are the ones a user sees, and a test built with -race does not
// pay for race-instrumented type checking of every dependency.
package linttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
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

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// build returns the path of the module's oncelint tool, which go tool -n builds into the
// build cache when it is stale, once per process.
func build() (string, error) {
	buildOnce.Do(func() {
		out, err := exec.Command("go", "tool", "-n", "oncelint").Output()
		if err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				err = fmt.Errorf("%w\n%s", err, exit.Stderr)
			}
			buildErr = fmt.Errorf("building oncelint: %w", err)
			return
		}
		binary = strings.TrimSpace(string(out))
	})
	return binary, buildErr
}

// diagnostic is one entry of oncelint -json's output.
type diagnostic struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
}

// Run runs oncelint -json over the packages matching patterns, from dir, and returns the
// findings sorted by file and line. It fails t when the command fails or a package does not
// load or type-check.
func Run(t testing.TB, dir string, patterns ...string) []Finding {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatalf("linttest: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"-json"}, patterns...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("linttest: oncelint %v: %v\n%s", patterns, err, stderr.Bytes())
	}
	// The findings by package path and analyzer name, the errors of the packages that
	// failed, and the run's summary.
	var out struct {
		Diagnostics map[string]map[string]json.RawMessage
		Errors      []string
		Summary     json.RawMessage
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("linttest: reading oncelint -json: %v\n%s", err, stdout.Bytes())
	}
	if len(out.Errors) > 0 || len(out.Summary) == 0 {
		t.Fatalf("linttest: oncelint %v: errors %q, summary %s", patterns, out.Errors, out.Summary)
	}
	tree := out.Diagnostics
	seen := map[Finding]bool{}
	var found []Finding
	for pkg, byAnalyzer := range tree {
		for analyzer, raw := range byAnalyzer {
			var diags []diagnostic
			if err := json.Unmarshal(raw, &diags); err != nil {
				t.Fatalf("linttest: %s: %s: %s", pkg, analyzer, raw)
			}
			for _, d := range diags {
				f, err := finding(d)
				if err != nil {
					t.Fatalf("linttest: %s: %v", pkg, err)
				}
				// A package and its test variant are analysed separately: report once.
				if !seen[f] {
					seen[f] = true
					found = append(found, f)
				}
			}
		}
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Code < b.Code
	})
	return found
}

// finding parses "path/file.go:line:col" into a Finding.
func finding(d diagnostic) (Finding, error) {
	parts := strings.Split(d.Posn, ":")
	if len(parts) < 3 {
		return Finding{}, fmt.Errorf("position %q is not file:line:col", d.Posn)
	}
	line, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil {
		return Finding{}, fmt.Errorf("position %q: %w", d.Posn, err)
	}
	file := strings.Join(parts[:len(parts)-2], ":")
	return Finding{Code: d.Category, File: filepath.Base(file), Line: line, Message: d.Message}, nil
}

// Strings returns the findings in their String form, for comparing with a want list.
func Strings(findings []Finding) []string {
	s := make([]string, len(findings))
	for i, f := range findings {
		s[i] = f.String()
	}
	return s
}
