// Package ignore reads //oncelint:ignore comments and decides which findings they
// silence.
//
// The form is staticcheck's: //oncelint:ignore ONCE001 reason, or several codes
// separated by commas. The reason is required. A comment in a function's doc comment
// covers the whole function; any other covers the statement it stands above or at the
// end of. An ignore that silences nothing is itself reported, by the check of its code,
// so that stale ignores do not pile up.
package ignore

import (
	"go/ast"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
)

// Prefix begins every ignore comment.
const Prefix = "//oncelint:ignore"

// Ignore is one //oncelint:ignore comment.
type Ignore struct {
	// Pos is the comment's position.
	Pos token.Pos
	// Codes are the codes it silences; Reason why.
	Codes  []string
	Reason string
	// From and To bound the source it covers.
	From, To token.Pos
	// Problem says what is wrong with a malformed comment; such a comment silences nothing.
	Problem string
}

// Covers reports whether the ignore is well formed and silences the check code at pos.
func (ig *Ignore) Covers(pos token.Pos, code string) bool {
	return ig.Problem == "" && ig.From <= pos && pos < ig.To && slices.Contains(ig.Codes, code)
}

// Index holds the ignores of a package.
type Index struct {
	List []*Ignore
}

var codeRE = regexp.MustCompile(`^ONCE00[0-6]$`)

// Parse finds the ignore comments of files and the source each covers.
func Parse(fset *token.FileSet, files []*ast.File) *Index {
	idx := &Index{}
	for _, f := range files {
		for _, g := range f.Comments {
			for _, c := range g.List {
				if !strings.HasPrefix(c.Text, Prefix) {
					continue
				}
				ig := parseComment(c)
				ig.From, ig.To = attach(fset.File(f.Pos()), f, c)
				if ig.Problem == "" && !ig.From.IsValid() {
					ig.Problem = "//oncelint:ignore is attached to nothing: put it above the statement or in the doc comment of the function it silences"
				}
				idx.List = append(idx.List, ig)
			}
		}
	}
	return idx
}

func parseComment(c *ast.Comment) *Ignore {
	ig := &Ignore{Pos: c.Slash}
	rest := strings.TrimPrefix(c.Text, Prefix)
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		ig.Problem = "malformed //oncelint:ignore: want //oncelint:ignore ONCE00N reason"
		return ig
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		ig.Problem = "//oncelint:ignore names no check: want //oncelint:ignore ONCE00N reason"
		return ig
	}
	for _, code := range strings.Split(fields[0], ",") {
		if !codeRE.MatchString(code) {
			ig.Problem = "//oncelint:ignore names unknown check " + strings.TrimSpace(code) + ": the checks are ONCE000 to ONCE006"
			return ig
		}
		ig.Codes = append(ig.Codes, code)
	}
	ig.Reason = strings.TrimSpace(strings.Join(fields[1:], " "))
	if ig.Reason == "" {
		ig.Problem = "//oncelint:ignore " + fields[0] + " gives no reason: say why the finding does not apply"
	}
	return ig
}

// attach returns the source a comment covers: the function whose doc comment holds it,
// or the outermost statement that starts on the comment's line (a trailing comment) or
// on the line after it.
func attach(tf *token.File, f *ast.File, c *ast.Comment) (token.Pos, token.Pos) {
	line := tf.Line(c.Slash)
	var from, to token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil || from.IsValid() {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Doc != nil && n.Doc.Pos() <= c.Slash && c.Slash < n.Doc.End() {
				from, to = n.Pos(), n.End()
				return false
			}
		case *ast.BlockStmt: // the statements in it, not the block
		case ast.Stmt, *ast.GenDecl, *ast.ValueSpec:
			if l := tf.Line(n.Pos()); (l == line && n.Pos() < c.Slash) || l == line+1 {
				from, to = n.Pos(), n.End()
				return false
			}
		}
		return true
	})
	return from, to
}

// Reporter reports the findings of one check, dropping those an ignore covers, and then
// the ignores of its code that covered nothing.
type Reporter struct {
	pass *analysis.Pass
	code string
	idx  *Index
	mu   sync.Mutex
	used map[*Ignore]bool
}

// NewReporter returns a Reporter for the check code.
func NewReporter(pass *analysis.Pass, idx *Index, code string) *Reporter {
	return &Reporter{pass: pass, code: code, idx: idx, used: map[*Ignore]bool{}}
}

// Report reports d unless an ignore of the code covers its position or one of the
// places it points to (its related positions: where a key is made, where the repeat
// comes from). The code is set as the category and appended to the message, as
// staticcheck does, so that the reader knows what to write in an ignore.
func (r *Reporter) Report(d analysis.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ig := range r.idx.List {
		if ig.Covers(d.Pos, r.code) || slices.ContainsFunc(d.Related, func(rel analysis.RelatedInformation) bool { return ig.Covers(rel.Pos, r.code) }) {
			r.used[ig] = true
			return
		}
	}
	d.Category = r.code
	d.Message += " (" + r.code + ")"
	r.pass.Report(d)
}

// Use marks the ignores of the code covering pos as in use: the finding they silence is
// reported (and silenced) by another package, which reads them through facts.
func (r *Reporter) Use(pos token.Pos) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ig := range r.idx.List {
		if ig.Covers(pos, r.code) {
			r.used[ig] = true
		}
	}
}

// Finish reports the well-formed ignores of the code that silenced nothing.
func (r *Reporter) Finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ig := range r.idx.List {
		if ig.Problem == "" && slices.Contains(ig.Codes, r.code) && !r.used[ig] {
			r.pass.Report(analysis.Diagnostic{
				Pos:      ig.Pos,
				Category: r.code,
				Message:  "this //oncelint:ignore " + r.code + " silences no " + r.code + " finding: remove it (" + r.code + ")",
			})
		}
	}
}
