package generator

import (
	"bufio"
	"bytes"
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// GenerateLine is one //go:generate line that runs oncegen: what go generate would run, and
// where. oncegen -check reads them to check what each would write (a module's migrations
// are named only there).
type GenerateLine struct {
	// Pos is the line's file and line number (column 1).
	Pos token.Position
	// Dir is the directory go generate runs it in: its package's.
	Dir string
	// Args are oncegen's arguments, split and expanded as go generate does.
	Args []string
}

// GenerateLines returns the //go:generate lines of the directories of pkgs that run oncegen
// (as `go tool [flags] oncegen`, `go run [flags] <path>/cmd/oncegen[@version]`, an `oncegen`
// binary, or a -command alias of one of these), sorted by file and line. It reads the files
// as go generate does: every Go file of the directory that the build, with the generate tag
// added, would compile or test, line by line (a line inside a block comment counts too). A
// line whose quoting go generate would refuse is a *LineError naming it. The files are listed
// by go/build for the process's GOOS and GOARCH; tags given through GOFLAGS, and settings
// made with go env -w, are not read.
func GenerateLines(pkgs []*packages.Package) ([]GenerateLine, error) {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range pkgs {
		if p.Dir != "" && !seen[p.Dir] {
			seen[p.Dir] = true
			dirs = append(dirs, p.Dir)
		}
	}
	sort.Strings(dirs)
	bctx := build.Default
	bctx.BuildTags = append(append([]string(nil), bctx.BuildTags...), "generate")
	var lines []GenerateLine
	for _, dir := range dirs {
		bp, err := bctx.ImportDir(dir, 0)
		var files []string
		for _, list := range [][]string{bp.GoFiles, bp.CgoFiles, bp.TestGoFiles, bp.XTestGoFiles} {
			files = append(files, list...)
		}
		if err != nil && len(files) == 0 {
			// As go generate: a package in error still has its files read; only one with
			// none is an error (and a directory with no Go files at all, nothing to read).
			if _, none := err.(*build.NoGoError); none {
				continue
			}
			return nil, fmt.Errorf("reading the //go:generate lines of %s: %w", dir, err)
		}
		for _, f := range files {
			fl, err := fileGenerateLines(filepath.Join(dir, f))
			if err != nil {
				return nil, err
			}
			lines = append(lines, fl...)
		}
	}
	sort.Slice(lines, func(i, j int) bool { return before(lines[i].Pos, lines[j].Pos) })
	return lines, nil
}

// LineError is a //go:generate line that go generate would refuse.
type LineError struct {
	Pos token.Position
	Msg string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s: //go:generate: %s", e.Pos, e.Msg) }

// fileGenerateLines reads the oncegen lines of one file, with its -command aliases (each
// valid for the rest of its file) and its own package clause for $GOPACKAGE, as go generate
// has them. A file whose package clause does not parse is skipped, as go generate skips it.
func fileGenerateLines(filename string) ([]GenerateLine, error) {
	src, err := os.ReadFile(filename)
	if err != nil {
		return nil, fmt.Errorf("reading the //go:generate lines: %w", err)
	}
	if !bytes.Contains(src, []byte("//go:generate")) {
		return nil, nil
	}
	clause, err := parser.ParseFile(token.NewFileSet(), filename, src, parser.PackageClauseOnly)
	if err != nil {
		return nil, nil
	}
	var lines []GenerateLine
	aliases := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, len(src)+1)
	for n := 1; sc.Scan(); n++ {
		text, ok := bytes.CutPrefix(sc.Bytes(), []byte("//go:generate"))
		if !ok || len(text) == 0 || (text[0] != ' ' && text[0] != '\t') {
			continue // go generate reads only a line that starts with the directive and a space
		}
		pos := token.Position{Filename: filename, Line: n, Column: 1}
		words, err := splitGenerate(strings.TrimRight(string(text), "\r"), pos, clause.Name.Name)
		if err != nil {
			return nil, err
		}
		if len(words) >= 2 && words[0] == "-command" {
			aliases[words[1]] = words[2:]
			continue
		}
		if len(words) > 0 {
			if alias, ok := aliases[words[0]]; ok {
				words = append(append([]string(nil), alias...), words[1:]...)
			}
		}
		args, chdir, ok := oncegenArgs(words)
		if !ok {
			continue
		}
		dir := filepath.Dir(filename)
		if chdir != "" {
			if !filepath.IsAbs(chdir) {
				chdir = filepath.Join(dir, chdir)
			}
			dir = chdir
		}
		lines = append(lines, GenerateLine{Pos: pos, Dir: dir, Args: args})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the //go:generate lines of %s: %w", filename, err)
	}
	return lines, nil
}

// goFlagsWithValue are the flags of go tool and go run (the build flags) whose value may
// follow as the next word.
var goFlagsWithValue = map[string]bool{
	"C": true, "exec": true, "modfile": true, "mod": true, "tags": true, "overlay": true, "pgo": true,
	"p": true, "pkgdir": true, "gcflags": true, "ldflags": true, "asmflags": true, "gccgoflags": true,
	"toolexec": true, "buildmode": true, "compiler": true, "installsuffix": true, "covermode": true,
	"coverpkg": true,
}

// oncegenArgs reports whether words (a go:generate command) run oncegen, its arguments, and
// the directory go tool or go run were told to run it in (-C), if any. A go tool or go run
// told only to print the command (-n) does not run it.
func oncegenArgs(words []string) (args []string, chdir string, ok bool) {
	isOncegen := func(w string) bool {
		w, _, _ = strings.Cut(w, "@")
		return path.Base(filepath.ToSlash(w)) == "oncegen"
	}
	switch {
	case len(words) >= 2 && words[0] == "go" && (words[1] == "tool" || words[1] == "run"):
		i := 2
		for i < len(words) && strings.HasPrefix(words[i], "-") {
			name, value, hasValue := strings.Cut(strings.TrimLeft(words[i], "-"), "=")
			i++
			if !hasValue && goFlagsWithValue[name] && i < len(words) {
				value = words[i]
				i++
			}
			switch name {
			case "C":
				chdir = value
			case "n":
				return nil, "", false
			}
		}
		if i < len(words) && isOncegen(words[i]) {
			return words[i+1:], chdir, true
		}
	case len(words) >= 1 && isOncegen(words[0]):
		return words[1:], "", true
	}
	return nil, "", false
}

// splitGenerate splits a go:generate line's text into words as go generate does: words
// separated by spaces or tabs, a double-quoted word unquoted with Go's rules (and followed by
// a space, a tab or the line's end), and $NAME or ${NAME} expanded in each: GOFILE, GOLINE,
// GOPACKAGE, PWD (the package's directory), GOOS, GOARCH and GOROOT as the go command has
// them, DOLLAR, and otherwise the environment.
func splitGenerate(text string, pos token.Position, pkgName string) ([]string, error) {
	expand := func(name string) string {
		switch name {
		case "GOFILE":
			return filepath.Base(pos.Filename)
		case "GOLINE":
			return strconv.Itoa(pos.Line)
		case "GOPACKAGE":
			return pkgName
		case "PWD":
			return filepath.Dir(pos.Filename)
		case "GOOS":
			return build.Default.GOOS
		case "GOARCH":
			return build.Default.GOARCH
		case "GOROOT":
			return build.Default.GOROOT
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
				return nil, &LineError{pos, "unterminated quoted string"}
			}
			w, err := strconv.Unquote(text[:end+1])
			if err != nil {
				return nil, &LineError{pos, fmt.Sprintf("bad quoted string %s: %v", text[:end+1], err)}
			}
			if rest := text[end+1:]; rest != "" && rest[0] != ' ' && rest[0] != '\t' {
				return nil, &LineError{pos, "expect space after quoted argument " + text[:end+1]}
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

// before orders positions by file, then by place in the file.
func before(a, b token.Position) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Offset < b.Offset
}
