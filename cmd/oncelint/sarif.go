package main

import (
	"io"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/oncekit/once/analyzer"
	"github.com/oncekit/once/internal/sarif"
)

func writeSARIF(w io.Writer, root string, diags []*diag, sum *summary) error {
	var findings []sarif.Finding
	for _, d := range diags {
		f := sarif.Finding{RuleID: d.Category, Message: d.Message, Position: posn(d.Posn, d.End), Fingerprint: d.fingerprint}
		if !strings.HasPrefix(f.RuleID, "ONCE") {
			f.RuleID = strings.ToUpper(d.check)
		}
		for _, r := range d.Related {
			f.Related = append(f.Related, sarif.Related{Position: posn(r.Posn, r.End), Message: r.Message})
		}
		findings = append(findings, f)
	}
	return sarif.Write(w, "oncelint", version(), infoURI, root, rules(), findings, map[string]any{"oncelint/coverage": sum})
}

// posn parses go vet's "file:line:col" positions.
func posn(start, end string) sarif.Position {
	file, line, col := splitPosn(start)
	p := sarif.Position{File: file, Line: line, Column: col}
	if ef, el, ec := splitPosn(end); ef == file && el > 0 {
		p.EndLine, p.EndColumn = el, ec
	}
	return p
}

func splitPosn(s string) (file string, line, col int) {
	rest, c, ok := cutLast(s)
	if !ok {
		return s, 0, 0
	}
	file, l, ok := cutLast(rest)
	if !ok {
		return rest, c, 0
	}
	return file, l, c
}

func cutLast(s string) (string, int, bool) {
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return s, 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return s, 0, false
	}
	return s[:i], n, true
}

// rules are the SARIF rules of the checks, from their documentation.
func rules() []sarif.Rule {
	var out []sarif.Rule
	for _, a := range analyzer.Analyzers {
		if strings.HasPrefix(a.Name, "once") {
			out = append(out, sarif.Rule{ID: strings.ToUpper(a.Name), Name: a.Name, Doc: strings.TrimPrefix(a.Doc, a.Name+": ")})
		}
	}
	return out
}

const infoURI = "https://pkg.go.dev/github.com/oncekit/once/cmd/oncelint"

// version is the module version the command was built from, when it was built as a
// dependency, or empty.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return ""
}
