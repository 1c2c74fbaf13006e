package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// baselineEntry is one recorded finding.
type baselineEntry struct {
	Fingerprint string `json:"fingerprint"`
	Code        string `json:"code"`
	Func        string `json:"func"`
	Message     string `json:"message"`
}

type baselineFile struct {
	Version  int             `json:"version"`
	Findings []baselineEntry `json:"findings"`
}

var posRE = regexp.MustCompile(`\S+\.go:\d+(:\d+)?`)

// fingerprints gives each finding the fingerprint a baseline records: its code, the full
// name of the function holding it, and its message without positions. Lines move; these
// do not, until the code they describe changes.
func fingerprints(diags []*diag, root string) {
	modPath := modulePath(root)
	files := map[string]*ast.File{}
	fsets := map[string]*token.FileSet{}
	for _, d := range diags {
		file, line, _ := splitPosn(d.Posn)
		f, ok := files[file]
		if !ok {
			fset := token.NewFileSet()
			f, _ = parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			files[file], fsets[file] = f, fset
		}
		name := "package"
		if f != nil {
			name = enclosing(fsets[file], f, line)
			dir := filepath.Dir(file)
			if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") && modPath != "" {
				dir = strings.TrimSuffix(modPath+"/"+filepath.ToSlash(rel), "/.")
			}
			name = dir + "." + name
		}
		d.fingerprint = name
		h := sha256.Sum256([]byte(d.Category + "\x00" + name + "\x00" + posRE.ReplaceAllString(d.Message, "")))
		d.fingerprint = fmt.Sprintf("%x", h[:12])
		d.fn = name
	}
}

// enclosing names the function declared around a line: F or T.M.
func enclosing(fset *token.FileSet, f *ast.File, line int) string {
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		from := fset.Position(fd.Pos()).Line
		if fd.Doc != nil {
			from = fset.Position(fd.Doc.Pos()).Line
		}
		if from <= line && line <= fset.Position(fd.End()).Line {
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				t := fd.Recv.List[0].Type
				if s, ok := t.(*ast.StarExpr); ok {
					t = s.X
				}
				if ix, ok := t.(*ast.IndexExpr); ok {
					t = ix.X
				}
				if ix, ok := t.(*ast.IndexListExpr); ok {
					t = ix.X
				}
				if id, ok := t.(*ast.Ident); ok {
					return id.Name + "." + fd.Name.Name
				}
			}
			return fd.Name.Name
		}
	}
	return "package"
}

func writeBaselineFile(name string, diags []*diag) error {
	b := baselineFile{Version: 1, Findings: []baselineEntry{}}
	for _, d := range diags {
		b.Findings = append(b.Findings, baselineEntry{Fingerprint: d.fingerprint, Code: d.Category, Func: d.fn, Message: d.Message})
	}
	sort.SliceStable(b.Findings, func(i, j int) bool {
		x, y := b.Findings[i], b.Findings[j]
		if x.Func != y.Func {
			return x.Func < y.Func
		}
		return x.Fingerprint < y.Fingerprint
	})
	data, err := json.MarshalIndent(b, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(data, '\n'), 0o666)
}

func readBaseline(name string) (map[string]int, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	var b baselineFile
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", name, err)
	}
	if b.Version != 1 {
		return nil, fmt.Errorf("baseline %s: version %d, want 1", name, b.Version)
	}
	known := map[string]int{}
	for _, e := range b.Findings {
		known[e.Fingerprint]++
	}
	return known, nil
}

// applyBaseline drops the findings the baseline records, each as many times as it is
// recorded, and returns the rest and how many it dropped.
func applyBaseline(diags []*diag, known map[string]int) ([]*diag, int) {
	var out []*diag
	dropped := 0
	for _, d := range diags {
		if known[d.fingerprint] > 0 {
			known[d.fingerprint]--
			dropped++
			continue
		}
		out = append(out, d)
	}
	return out, dropped
}

// moduleRoot is the main module's directory, against which SARIF names files.
func moduleRoot() string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err == nil {
		if dir := strings.TrimSpace(strings.Split(string(out), "\n")[0]); dir != "" {
			return dir
		}
	}
	wd, _ := os.Getwd()
	return wd
}

func modulePath(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
