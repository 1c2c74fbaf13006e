package generator

import (
	"fmt"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// GenerateLine is one //go:generate comment that runs oncegen: what go generate would run,
// and where. oncegen -check reads them to check what each would write (a module's
// migrations are named only there).
type GenerateLine struct {
	// Pos is the comment's file and line.
	Pos token.Position
	// Dir is the directory go generate runs it in: its file's.
	Dir string
	// Args are oncegen's arguments, split and expanded as go generate does.
	Args []string
}

// GenerateLines returns the //go:generate comments of pkgs that run oncegen (as
// `go tool oncegen`, `go run <path>/cmd/oncegen[@version]` or an `oncegen` binary), sorted by
// file and line. A line whose quoting go generate would refuse is an error.
func GenerateLines(pkgs []*packages.Package) ([]GenerateLine, error) {
	var lines []GenerateLine
	seen := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					text, ok := strings.CutPrefix(c.Text, "//go:generate")
					if !ok || (text != "" && text[0] != ' ' && text[0] != '\t') {
						continue
					}
					pos := p.Fset.Position(c.Slash)
					if pos.Column != 1 || seen[pos.String()] {
						continue // go generate reads the directive only at the start of a line
					}
					seen[pos.String()] = true
					words, err := splitGenerate(text, pos, p.Name)
					if err != nil {
						return nil, err
					}
					if args, ok := oncegenArgs(words); ok {
						lines = append(lines, GenerateLine{Pos: pos, Dir: filepath.Dir(pos.Filename), Args: args})
					}
				}
			}
		}
	}
	sort.Slice(lines, func(i, j int) bool { return before(lines[i].Pos, lines[j].Pos) })
	return lines, nil
}

// before orders positions by file, then by place in the file.
func before(a, b token.Position) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	return a.Offset < b.Offset
}

// oncegenArgs reports whether words (a go:generate command) run oncegen, and its arguments.
func oncegenArgs(words []string) ([]string, bool) {
	isOncegen := func(w string) bool {
		w, _, _ = strings.Cut(w, "@")
		return path.Base(filepath.ToSlash(w)) == "oncegen"
	}
	switch {
	case len(words) >= 3 && words[0] == "go" && words[1] == "tool" && isOncegen(words[2]):
		return words[3:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run":
		for i := 2; i < len(words); i++ {
			if strings.HasPrefix(words[i], "-") {
				continue // a flag of go run
			}
			if isOncegen(words[i]) {
				return words[i+1:], true
			}
			return nil, false
		}
	case len(words) >= 1 && isOncegen(words[0]):
		return words[1:], true
	}
	return nil, false
}

// splitGenerate splits a go:generate line's text into words as go generate does: words
// separated by spaces or tabs, a double-quoted word unquoted with Go's rules, and $NAME or
// ${NAME} expanded in each (GOFILE, GOLINE, GOPACKAGE, GOOS, GOARCH, DOLLAR, and otherwise
// the environment).
func splitGenerate(text string, pos token.Position, pkgName string) ([]string, error) {
	expand := func(name string) string {
		switch name {
		case "GOFILE":
			return filepath.Base(pos.Filename)
		case "GOLINE":
			return strconv.Itoa(pos.Line)
		case "GOPACKAGE":
			return pkgName
		case "GOOS":
			return runtime.GOOS
		case "GOARCH":
			return runtime.GOARCH
		case "DOLLAR":
			return "$"
		}
		return os.Getenv(name)
	}
	var words []string
	for text = strings.TrimLeft(text, " \t"); text != ""; text = strings.TrimLeft(text, " \t") {
		var word string
		if text[0] == '"' {
			end := 1
			for ; end < len(text); end++ {
				if text[end] == '\\' {
					end++
					continue
				}
				if text[end] == '"' {
					break
				}
			}
			if end >= len(text) {
				return nil, fmt.Errorf("%s: //go:generate: unterminated quoted string", pos)
			}
			w, err := strconv.Unquote(text[:end+1])
			if err != nil {
				return nil, fmt.Errorf("%s: //go:generate: bad quoted string %s: %w", pos, text[:end+1], err)
			}
			word, text = w, text[end+1:]
		} else {
			end := strings.IndexAny(text, " \t")
			if end < 0 {
				end = len(text)
			}
			word, text = text[:end], text[end:]
		}
		words = append(words, os.Expand(word, expand))
	}
	return words, nil
}
