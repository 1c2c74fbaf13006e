package generator

import (
	"bytes"
	"fmt"
	"go/format"
	"strings"
)

// gofmt formats a generated file once: jennifer renders it unformatted (NoFormat), its
// imports are grouped as goimports groups them (std tells the standard library's paths),
// and go/format does the rest. Nothing is kept between runs: a cold run formats every
// file, and a warm one does the same work.
func gofmt(src []byte, std func(path string) bool) ([]byte, error) {
	out, err := format.Source(groupImports(src, std))
	if err != nil {
		return nil, fmt.Errorf("formatting generated code: %w\n%s", err, src)
	}
	return out, nil
}

// groupImports splits the import block jennifer renders (one block, sorted by path) into
// the standard library's packages first and then the others, separated by a blank line,
// as goimports writes them; gofmt keeps the groups and sorts within each. std reports a
// standard library path: a module path without a dot (myapp/internal/x) is not one, so it
// is not told by its shape (see stdPackages).
func groupImports(src []byte, std func(path string) bool) []byte {
	const open, close = "\nimport (\n", "\n)\n"
	start := bytes.Index(src, []byte(open))
	if start < 0 {
		return src // one import, or none
	}
	body := start + len(open)
	end := bytes.Index(src[body:], []byte(close))
	if end < 0 {
		return src
	}
	var stdLines, other []string
	for _, line := range strings.Split(string(src[body:body+end]), "\n") {
		if std(importPath(line)) {
			stdLines = append(stdLines, line)
		} else {
			other = append(other, line)
		}
	}
	if len(stdLines) == 0 || len(other) == 0 {
		return src
	}
	var b bytes.Buffer
	b.Grow(len(src) + 1)
	b.Write(src[:body])
	b.WriteString(strings.Join(stdLines, "\n"))
	b.WriteString("\n\n")
	b.WriteString(strings.Join(other, "\n"))
	b.Write(src[body+end:])
	return b.Bytes()
}

// importPath is the path of an import spec line ("path" or name "path").
func importPath(line string) string {
	i := strings.IndexByte(line, '"')
	if i < 0 {
		return ""
	}
	return strings.Trim(line[i:], "\"")
}

// docWidth is how long a generated doc comment's lines grow, in bytes, "// " included.
const docWidth = 98

// docLines wraps text into // lines of at most docWidth bytes (a longer word stands alone),
// in the form gofmt leaves as it is: one paragraph, every line "// " and words. A line never
// starts with a word gofmt would read as a list marker or a heading (-, +, *, •, #, 1., 2)
// and the like), which could come from a key expression: such a word stays on the line
// before.
func docLines(text string) []string {
	var lines []string
	var line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(w) > docWidth && !marksLine(w) {
			lines = append(lines, line.String())
			line.Reset()
		}
		if line.Len() == 0 {
			line.WriteString("//")
		}
		line.WriteByte(' ')
		line.WriteString(w)
	}
	if line.Len() > 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// marksLine reports a word that, at the start of a comment line, gofmt reads as more than
// text: a list marker (-, +, *, •, or digits followed by . or )), or a heading's #.
func marksLine(w string) bool {
	switch {
	case strings.HasPrefix(w, "-"), strings.HasPrefix(w, "+"), strings.HasPrefix(w, "*"),
		strings.HasPrefix(w, "•"), strings.HasPrefix(w, "#"):
		return true
	}
	i := 0
	for i < len(w) && w[i] >= '0' && w[i] <= '9' {
		i++
	}
	return i > 0 && (i == len(w) || w[i] == '.' || w[i] == ')')
}

// spliceDocs puts each top-level declaration's doc comment back above it in src, a
// formatted file: the declarations are the lines at column 0 starting with func, var,
// const or type, in the order they were rendered (no literal the generator writes spans
// lines, so no such line is inside one).
func spliceDocs(src []byte, docs [][]string) ([]byte, error) {
	var b bytes.Buffer
	size := len(src)
	for _, d := range docs {
		for _, l := range d {
			size += len(l) + 1
		}
	}
	b.Grow(size)
	next := 0
	for rest := src; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		if isDeclLine(line) {
			if next == len(docs) {
				return nil, fmt.Errorf("generated code: more declarations than doc comments")
			}
			for _, l := range docs[next] {
				b.WriteString(l)
				b.WriteByte('\n')
			}
			next++
		}
		b.Write(line)
	}
	if next != len(docs) {
		return nil, fmt.Errorf("generated code: %d declarations for %d doc comments", next, len(docs))
	}
	return b.Bytes(), nil
}

func isDeclLine(line []byte) bool {
	for _, kw := range []string{"func ", "var ", "const ", "type "} {
		if bytes.HasPrefix(line, []byte(kw)) {
			return true
		}
	}
	return false
}
