package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/oncekit/once/analyzer"
	"github.com/oncekit/once/internal/sarif"
)

// hasFlag reports whether the leading flags of args set the boolean flag name.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			return false
		}
		if n, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name {
			return value == "" || value == "true" || value == "1"
		}
	}
	return false
}

// vetDiagnostic is one finding of go vet -json.
type vetDiagnostic struct {
	Posn     string `json:"posn"`
	End      string `json:"end,omitempty"`
	Message  string `json:"message"`
	Category string `json:"category,omitempty"`
	Related  []struct {
		Posn    string `json:"posn"`
		End     string `json:"end,omitempty"`
		Message string `json:"message"`
	} `json:"related,omitempty"`
}

// runLowMem is -lowmem: the packages are checked as go vet checks them, each in a process
// of its own that reads its dependencies' types and facts from files, so the memory used is
// that of the largest package rather than of the whole program with its dependencies from
// source. The findings are go vet's with this tool, printed as the standalone driver prints
// them (text, -json or -sarif). It returns the exit status: 0 clean, 1 on errors, 3 with
// findings.
func runLowMem(args []string, stdout, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "oncelint -lowmem: %v\n", err)
		return 1
	}
	asJSON, asSARIF := hasFlag(args, "json"), hasFlag(args, "sarif")
	vetArgs := []string{"vet", "-vettool=" + exe, "-json"}
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			vetArgs = append(vetArgs, args[i:]...)
			break
		}
		switch n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n {
		case "lowmem", "json", "sarif":
			continue
		}
		vetArgs = append(vetArgs, a)
	}
	cmd := exec.Command("go", vetArgs...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	stderr.Write(errOut.Bytes())

	// go vet prints one JSON tree per package: package, then check, then the findings or
	// {"error": ...}.
	tree := map[string]map[string][]vetDiagnostic{}
	seen := map[string]bool{}
	code := 0
	if _, failed := runErr.(*exec.ExitError); runErr != nil && !failed {
		fmt.Fprintf(stderr, "oncelint -lowmem: go vet: %v\n", runErr)
		return 1
	} else if failed {
		code = 1
	}
	dec := json.NewDecoder(&out)
	for dec.More() {
		var pkgs map[string]map[string]json.RawMessage
		if err := dec.Decode(&pkgs); err != nil {
			fmt.Fprintf(stderr, "oncelint -lowmem: reading go vet's output: %v\n", err)
			return 1
		}
		for pkg, checks := range pkgs {
			// A test variant ("p [p.test]") repeats its package's findings.
			pkg, _, _ = strings.Cut(pkg, " ")
			for check, raw := range checks {
				var diags []vetDiagnostic
				if err := json.Unmarshal(raw, &diags); err != nil {
					var e struct{ Error string }
					json.Unmarshal(raw, &e)
					fmt.Fprintf(stderr, "%s: %s: %s\n", pkg, check, e.Error)
					code = 1
					continue
				}
				for _, d := range diags {
					k := d.Posn + "\x00" + d.Message
					if seen[k] {
						continue
					}
					seen[k] = true
					if tree[pkg] == nil {
						tree[pkg] = map[string][]vetDiagnostic{}
					}
					tree[pkg][check] = append(tree[pkg][check], d)
				}
			}
		}
	}

	switch {
	case asSARIF:
		if err := writeSARIF(stdout, tree); err != nil {
			fmt.Fprintf(stderr, "oncelint -lowmem: %v\n", err)
			return 1
		}
	case asJSON:
		b, err := json.MarshalIndent(tree, "", "\t")
		if err != nil {
			fmt.Fprintf(stderr, "oncelint -lowmem: %v\n", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
	default:
		var lines []string
		for _, checks := range tree {
			for _, diags := range checks {
				for _, d := range diags {
					s := d.Posn + ": " + d.Message + "\n"
					for _, r := range d.Related {
						s += r.Posn + ": \t" + r.Message + "\n"
					}
					lines = append(lines, s)
				}
			}
		}
		slices.Sort(lines)
		io.WriteString(stderr, strings.Join(lines, ""))
	}
	if code == 0 && len(seen) > 0 {
		code = 3
	}
	return code
}

func writeSARIF(w io.Writer, tree map[string]map[string][]vetDiagnostic) error {
	var findings []sarif.Finding
	for _, checks := range tree {
		for check, diags := range checks {
			for _, d := range diags {
				id := d.Category
				if !strings.HasPrefix(id, "ONCE") {
					id = strings.ToUpper(check)
				}
				f := sarif.Finding{RuleID: id, Message: d.Message, Position: posn(d.Posn, d.End)}
				for _, r := range d.Related {
					f.Related = append(f.Related, sarif.Related{Position: posn(r.Posn, r.End), Message: r.Message})
				}
				findings = append(findings, f)
			}
		}
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		wd, _ := os.Getwd()
		root = []byte(wd)
	}
	return sarif.Write(w, "oncelint", version(), infoURI, strings.TrimSpace(string(root)), rules(), findings)
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
		out = append(out, sarif.Rule{ID: strings.ToUpper(a.Name), Name: a.Name, Doc: strings.TrimPrefix(a.Doc, a.Name+": ")})
	}
	return out
}

const infoURI = "https://pkg.go.dev/github.com/oncekit/once/cmd/oncelint"
