// Package passdoc extracts an analyzer's documentation from its package's doc.go, the
// way the x/tools passes keep one text for godoc and for "oncelint help".
package passdoc

import (
	"go/parser"
	"go/token"
	"strings"
)

// Extract returns the "# Analyzer name" section of the package doc comment in the Go
// source content: its first line is the analyzer's title. If the section is missing the
// whole package comment is returned, so a mistake shows in the help text instead of
// stopping the program.
func Extract(content, name string) string {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", content, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		return name
	}
	text, section, found := strings.Cut(f.Doc.Text(), "# Analyzer "+name)
	if !found {
		return strings.TrimSpace(text)
	}
	section, _, _ = strings.Cut(section, "\n# ") // up to the next section
	return strings.TrimSpace(section)
}
