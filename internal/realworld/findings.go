package realworld

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Finding is one diagnostic of oncelint, identified the way verdicts and labels name it:
// by file, enclosing function and code, never by line alone (lines move between commits
// of the analyzer's own testdata, functions rarely do).
type Finding struct {
	Repo    string
	File    string // slash path relative to the repository root
	Func    string // enclosing function ("Func", "Type.Method"), "-" outside any
	Line    int
	Code    string
	Message string
}

// Key is what a verdict or label with no message filter matches.
func (f Finding) Key() string { return f.Repo + " " + f.File + " " + f.Func + " " + f.Code }

// String formats a finding as a reader looks it up: "repo file:line Func CODE: message".
func (f Finding) String() string {
	return fmt.Sprintf("%s %s:%d %s %s: %s", f.Repo, f.File, f.Line, f.Func, f.Code, f.Message)
}

// jsonDiagnostic is one entry of oncelint -json's output (the go/analysis JSON tree:
// package → analyzer → diagnostics, or an object with "error").
type jsonDiagnostic struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
}

// ParseJSON reads oncelint -json's output for one repository whose tree is root, and
// returns its findings, each once (a package and its test variant report the same one),
// sorted by file, line and code. funcAt names the function enclosing a position; pass
// EnclosingFunc to read it from the file. An analyzer that failed on a package is an error.
func ParseJSON(repo, root string, out []byte, funcAt func(file string, line int) (string, error)) ([]Finding, error) {
	var tree map[string]map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var findings []Finding
	seen := map[string]bool{}
	// oncelint prints one object holding the tree under "diagnostics" and its summary;
	// go vet and older drivers print the trees themselves, one per package or run.
	for dec.More() {
		var raw map[string]json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("reading oncelint -json output: %w", err)
		}
		tree = nil
		if d, ok := raw["diagnostics"]; ok {
			if err := json.Unmarshal(d, &tree); err != nil {
				return nil, fmt.Errorf("reading oncelint -json output: %w", err)
			}
			var errs []string
			json.Unmarshal(raw["errors"], &errs)
			if len(errs) > 0 {
				return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
			}
		} else {
			tree = map[string]map[string]json.RawMessage{}
			for pkg, v := range raw {
				var byAnalyzer map[string]json.RawMessage
				if err := json.Unmarshal(v, &byAnalyzer); err != nil {
					return nil, fmt.Errorf("reading oncelint -json output: %w", err)
				}
				tree[pkg] = byAnalyzer
			}
		}
		for pkg, byAnalyzer := range tree {
			for analyzer, raw := range byAnalyzer {
				var diags []jsonDiagnostic
				if err := json.Unmarshal(raw, &diags); err != nil {
					var e struct {
						Error string `json:"error"`
					}
					if json.Unmarshal(raw, &e) == nil && e.Error != "" {
						return nil, fmt.Errorf("%s on %s: %s", analyzer, pkg, e.Error)
					}
					return nil, fmt.Errorf("%s on %s: unexpected output %s", analyzer, pkg, raw)
				}
				for _, d := range diags {
					f, err := toFinding(repo, root, d, funcAt)
					if err != nil {
						return nil, err
					}
					k := fmt.Sprintf("%s:%d %s %s", f.File, f.Line, f.Code, f.Message)
					if !seen[k] {
						seen[k] = true
						findings = append(findings, f)
					}
				}
			}
		}
	}
	sort.Slice(findings, func(i, j int) bool {
		a, b := findings[i], findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Code < b.Code
	})
	return findings, nil
}

func toFinding(repo, root string, d jsonDiagnostic, funcAt func(string, int) (string, error)) (Finding, error) {
	file, line, err := splitPosn(d.Posn)
	if err != nil {
		return Finding{}, err
	}
	code := d.Category
	if code == "" {
		// An older output without categories: the code ends the message, "(ONCE001)".
		if i := strings.LastIndex(d.Message, "(ONCE"); i >= 0 && strings.HasSuffix(d.Message, ")") {
			code = d.Message[i+1 : len(d.Message)-1]
		}
	}
	fn, err := funcAt(file, line)
	if err != nil {
		return Finding{}, err
	}
	rel := file
	for _, dir := range []string{root, evalSymlinks(root)} {
		if r, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
			break
		}
	}
	return Finding{Repo: repo, File: rel, Func: fn, Line: line, Code: code, Message: d.Message}, nil
}

// evalSymlinks returns dir with its symbolic links resolved, as a tool run inside it
// prints its files' names, or dir when it cannot.
func evalSymlinks(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// splitPosn splits "file:line:col" (or "file:line").
func splitPosn(posn string) (string, int, error) {
	s := posn
	for range 2 {
		i := strings.LastIndex(s, ":")
		if i < 0 {
			break
		}
		if n, err := strconv.Atoi(s[i+1:]); err == nil {
			if j := strings.LastIndex(s[:i], ":"); j >= 0 {
				if m, err := strconv.Atoi(s[j+1 : i]); err == nil {
					return s[:j], m, nil
				}
			}
			return s[:i], n, nil
		}
		s = s[:i]
	}
	return "", 0, fmt.Errorf("position %q is not file:line:col", posn)
}

// FuncIndex names the function enclosing a line, reading each file once.
type FuncIndex struct {
	fset  *token.FileSet
	files map[string][]funcSpan
}

type funcSpan struct {
	name       string
	start, end int // lines, doc comment included
}

// NewFuncIndex returns an empty index.
func NewFuncIndex() *FuncIndex {
	return &FuncIndex{fset: token.NewFileSet(), files: map[string][]funcSpan{}}
}

// EnclosingFunc returns the name of the top-level function or method whose declaration
// (doc comment included) holds line of file: "Func" or "Type.Method" (pointer and type
// parameters dropped); a function literal counts as the function it is written in. Outside
// any function it returns "-".
func (x *FuncIndex) EnclosingFunc(file string, line int) (string, error) {
	spans, ok := x.files[file]
	if !ok {
		f, err := parser.ParseFile(x.fset, file, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return "", fmt.Errorf("reading the function of a finding: %w", err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start := fd.Pos()
			if fd.Doc != nil {
				start = fd.Doc.Pos()
			}
			spans = append(spans, funcSpan{
				name:  FuncName(fd),
				start: x.fset.Position(start).Line,
				end:   x.fset.Position(fd.End()).Line,
			})
		}
		x.files[file] = spans
	}
	for _, s := range spans {
		if s.start <= line && line <= s.end {
			return s.name, nil
		}
	}
	return "-", nil
}

// FuncName names a declaration as labels and verdicts do: "Func" or "Type.Method".
func FuncName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.ParenExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		}
		break
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// Summary is the coverage oncelint -json reports, as much of it as a table prints.
type Summary struct {
	Packages, Analysed, Effects, Covered, Findings int
	ByClass                                        map[string]int
	Unclassified                                   []struct {
		Func  string
		Sends int
	}
}

// ParseSummary reads the summary of oncelint -json's output, or nil when it has none.
func ParseSummary(out []byte) *Summary {
	var v struct{ Summary *Summary }
	if json.Unmarshal(out, &v) != nil {
		return nil
	}
	return v.Summary
}

// String writes the summary in one line.
func (s *Summary) String() string {
	sends := 0
	for _, u := range s.Unclassified {
		sends += u.Sends
	}
	return fmt.Sprintf("%d effects in %d packages (%d analysed) %v, %d covered, %d findings, %d unclassified sends in %d groups",
		s.Effects, s.Packages, s.Analysed, s.ByClass, s.Covered, s.Findings, sends, len(s.Unclassified))
}
