package model

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"sync"
)

// posString writes a position of this package as facts carry it: file:line:col.
func (a *analyzer) posString(pos token.Pos) string {
	if !pos.IsValid() {
		return ""
	}
	p := a.pass.Fset.Position(a.callStart(pos))
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// SplitPosition parses file:line:col.
func SplitPosition(s string) (file string, line, col int) {
	file, col, ok := cutNumber(s)
	if !ok {
		return s, 0, 0
	}
	if f, l, ok := cutNumber(file); ok {
		return f, l, col
	}
	return file, col, 0
}

func cutNumber(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	return s[:i], n, err == nil
}

// callStart returns where the call whose parenthesis is at pos begins (x.M in x.M(...)),
// the place a finding names; SSA knows calls by their parenthesis.
func (a *analyzer) callStart(pos token.Pos) token.Pos {
	if a.starts == nil {
		a.starts = map[token.Pos]token.Pos{}
		for _, f := range a.pass.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					a.starts[c.Lparen] = c.Pos()
				}
				return true
			})
		}
	}
	return cmp.Or(a.starts[pos], pos)
}

var synthMu sync.Mutex

// synthesize returns a position printing as the site of another package: a one-byte file
// of the pass's file set whose position information says file:line:col. A finding
// reported by the package that sees the repeat path sits where the effect is, the place
// a reader goes to and an //oncelint:ignore is written.
func (a *analyzer) synthesize(site string) token.Pos {
	if p, ok := a.synthetic[site]; ok {
		return p
	}
	file, line, col := SplitPosition(site)
	if line == 0 {
		return token.NoPos
	}
	synthMu.Lock()
	tf := a.pass.Fset.AddFile(file, -1, 1)
	synthMu.Unlock()
	tf.AddLineColumnInfo(0, file, line, max(col, 1))
	p := tf.Pos(0)
	a.synthetic[site] = p
	return p
}
