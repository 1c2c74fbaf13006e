package schema

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"regexp"
	"strconv"
	"strings"

	"github.com/oncekit/once/analyzer/internal/sqltext"
)

var (
	comments = regexp.MustCompile(`(?s)--[^\n]*|/\*.*?\*/`)
	literals = regexp.MustCompile(`'(?:[^']|'')*'`)
	ident    = `(?:[a-z_][a-z0-9_$]*|"[^"]+"|` + "`[^`]+`" + `)`
	tableRE  = `(` + ident + `(?:\.` + ident + `)?)`
	// CREATE UNIQUE INDEX [CONCURRENTLY] [IF NOT EXISTS] [name] ON [ONLY] table [USING m] (
	uniqueIndexRE = regexp.MustCompile(`\bcreate\s+unique\s+index\s+(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?(?:` + ident + `\s+)?on\s+(?:only\s+)?` + tableRE + `\s*(?:using\s+[a-z_]+\s*)?\(`)
	// CREATE TABLE [IF NOT EXISTS] table (
	createTableRE = regexp.MustCompile(`\bcreate\s+(?:(?:global\s+|local\s+)?(?:temporary|temp|unlogged)\s+)?table\s+(?:if\s+not\s+exists\s+)?` + tableRE + `\s*\(`)
	// ALTER TABLE [ONLY] [IF EXISTS] table ADD [CONSTRAINT name] UNIQUE|PRIMARY KEY (
	alterRE = regexp.MustCompile(`\balter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?` + tableRE + `\s+add\s+(?:constraint\s+` + ident + `\s+)?(unique|primary\s+key)\s*(?:nulls\s+(?:not\s+)?distinct\s*)?(?:(?:key|index)\s+` + ident + `?\s*)?\(`)
	// ALTER TABLE [IF EXISTS] [ONLY] table: its actions run to the statement's end.
	alterTableRE = regexp.MustCompile(`\balter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?` + tableRE + `\s+`)
	// One action of it: ADD [COLUMN] [IF NOT EXISTS] column type [constraints].
	addColumnRE = regexp.MustCompile(`^add\s+(?:column\s+)?(?:if\s+not\s+exists\s+)?(` + ident + `)\s`)
	// Inside CREATE TABLE: [CONSTRAINT name] UNIQUE [NULLS NOT DISTINCT] [KEY|INDEX name] ( / PRIMARY KEY (
	tableConstraintRE = regexp.MustCompile(`^(?:constraint\s+` + ident + `\s+)?(unique|primary\s+key)\s*(?:nulls\s+(?:not\s+)?distinct\s*)?(?:(?:key|index)\s*` + ident + `?\s*)?\(`)
	columnUniqueRE    = regexp.MustCompile(`\bunique\b`)
	columnPrimaryRE   = regexp.MustCompile(`\bprimary\s+key\b`)
	identRE           = regexp.MustCompile(ident)
	wordRE            = regexp.MustCompile(`[a-z_][a-z0-9_$]*\s*\(?`)
)

// DefinesTable reports whether SQL text holds a CREATE TABLE.
func DefinesTable(text string) bool {
	return createTableRE.MatchString(strings.ToLower(text))
}

// ParseSQL returns the unique constraints, unique indexes and primary keys that SQL text
// declares (CREATE UNIQUE INDEX, UNIQUE and PRIMARY KEY in CREATE TABLE, ALTER TABLE ..
// ADD UNIQUE, and a column added UNIQUE or PRIMARY KEY by ALTER TABLE .. ADD COLUMN). A
// partial index counts: the rows it covers are the ones a read that
// repeats its predicate looks for. name is where the text comes from, for messages.
func ParseSQL(name, text string) []Unique {
	low := strings.ToLower(text)
	low = comments.ReplaceAllStringFunc(low, blank)
	low = literals.ReplaceAllStringFunc(low, blank)
	line := func(off int) string { return fmt.Sprintf("%s:%d", name, strings.Count(text[:off], "\n")+1) }
	var out []Unique
	for _, m := range uniqueIndexRE.FindAllStringSubmatchIndex(low, -1) {
		cols := columnList(inParens(low, m[1]-1))
		out = append(out, Unique{Table: unquote(low[m[2]:m[3]]), Columns: cols, Where: line(m[0])})
	}
	for _, m := range alterRE.FindAllStringSubmatchIndex(low, -1) {
		cols := columnList(inParens(low, m[1]-1))
		primary := strings.HasPrefix(low[m[4]:m[5]], "primary")
		out = append(out, Unique{Table: unquote(low[m[2]:m[3]]), Columns: cols, Primary: primary, Where: line(m[0])})
	}
	for _, m := range alterTableRE.FindAllStringSubmatchIndex(low, -1) {
		table := unquote(low[m[2]:m[3]])
		body := low[m[1]:]
		if end := strings.IndexByte(body, ';'); end >= 0 {
			body = body[:end]
		}
		for _, action := range sqltext.SplitTop(body) {
			action = strings.TrimSpace(action)
			c := addColumnRE.FindStringSubmatchIndex(action)
			if c == nil {
				continue
			}
			col := action[c[2]:c[3]]
			if col == "constraint" || col == "unique" || col == "primary" {
				continue // a table constraint, read by alterRE
			}
			rest := action[c[1]:]
			switch {
			case columnPrimaryRE.MatchString(rest):
				out = append(out, Unique{Table: table, Columns: []string{unquote(col)}, Primary: true, Where: line(m[0])})
			case columnUniqueRE.MatchString(rest):
				out = append(out, Unique{Table: table, Columns: []string{unquote(col)}, Where: line(m[0])})
			}
		}
	}
	for _, m := range createTableRE.FindAllStringSubmatchIndex(low, -1) {
		table := unquote(low[m[2]:m[3]])
		body := inParens(low, m[1]-1)
		for _, item := range sqltext.SplitTop(body) {
			item = strings.TrimSpace(item)
			if c := tableConstraintRE.FindStringSubmatchIndex(item); c != nil {
				cols := columnList(inParens(item, c[1]-1))
				out = append(out, Unique{Table: table, Columns: cols, Primary: strings.HasPrefix(item[c[2]:c[3]], "primary"), Where: line(m[0])})
				continue
			}
			col := identRE.FindString(item)
			if col == "" || strings.HasPrefix(item, "constraint") || strings.HasPrefix(item, "check") ||
				strings.HasPrefix(item, "foreign") || strings.HasPrefix(item, "exclude") || strings.HasPrefix(item, "like") {
				continue
			}
			switch {
			case columnPrimaryRE.MatchString(item):
				out = append(out, Unique{Table: table, Columns: []string{unquote(col)}, Primary: true, Where: line(m[0])})
			case columnUniqueRE.MatchString(item):
				out = append(out, Unique{Table: table, Columns: []string{unquote(col)}, Where: line(m[0])})
			}
		}
	}
	return out
}

// blank replaces a match with spaces, keeping offsets (and so line numbers) where they
// were.
func blank(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		return ' '
	}, s)
}

// inParens returns the text inside the parenthesis opened at s[open].
func inParens(s string, open int) string {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s[open+1 : i]
			}
		}
	}
	return s[open+1:]
}

// columnList returns the column each element of an index's list names: email for
// "email", "lower(email)" or "email text_pattern_ops".
func columnList(list string) []string {
	var cols []string
	for _, item := range sqltext.SplitTop(list) {
		for _, w := range wordRE.FindAllString(item, -1) {
			if strings.HasSuffix(w, "(") {
				continue // a function's name
			}
			cols = append(cols, unquote(strings.TrimSpace(w)))
			break
		}
	}
	return cols
}

func unquote(name string) string {
	return strings.NewReplacer(`"`, "", "`", "").Replace(strings.TrimSpace(name))
}

// ParseGo returns the unique constraints a Go file of a schema directory declares: DDL in
// its string literals (a migration written in Go), and the unique fields and indexes of
// ent schema types (field.String("email").Unique(), index.Fields("a", "b").Unique()).
func ParseGo(name string, src []byte) []Unique {
	var out []Unique
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var sc scanner.Scanner
	sc.Init(file, src, nil, 0)
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.STRING {
			continue
		}
		s, err := strconv.Unquote(lit)
		if err != nil || !strings.Contains(strings.ToLower(s), "unique") && !strings.Contains(strings.ToLower(s), "primary") {
			continue
		}
		line := fset.Position(pos).Line
		for _, u := range ParseSQL(name, s) {
			u.Where = fmt.Sprintf("%s:%d", name, line)
			out = append(out, u)
		}
	}
	return append(out, parseEnt(name, src)...)
}

// parseEnt reads ent schema types: in func (User) Fields(), a field chain ending in
// Unique() (StorageKey naming its column); in func (User) Indexes(), index.Fields(...)
// ending in Unique(). The table is the type's name in snake case, plural, as ent names
// it.
func parseEnt(name string, src []byte) []Unique {
	if !strings.Contains(string(src), "Unique()") {
		return nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []Unique
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 || fd.Body == nil || (fd.Name.Name != "Fields" && fd.Name.Name != "Indexes") {
			continue
		}
		recv := fd.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		id, ok := recv.(*ast.Ident)
		if !ok {
			continue
		}
		table := entTable(id.Name)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 0 || selName(call.Fun) != "Unique" {
				return true
			}
			var cols []string
			storage := ""
			for c := call; c != nil; {
				sel, ok := c.Fun.(*ast.SelectorExpr)
				if !ok {
					break
				}
				switch sel.Sel.Name {
				case "StorageKey":
					if len(c.Args) == 1 {
						storage = stringLit(c.Args[0])
					}
				}
				if pkg, ok := sel.X.(*ast.Ident); ok {
					// The chain's root: field.String("email") or index.Fields("a", "b").
					switch {
					case pkg.Name == "index" && sel.Sel.Name == "Fields":
						for _, a := range c.Args {
							if s := stringLit(a); s != "" {
								cols = append(cols, s)
							}
						}
					case pkg.Name == "field" && len(c.Args) > 0:
						if s := stringLit(c.Args[0]); s != "" {
							cols = []string{s}
						}
					}
					break
				}
				next, ok := sel.X.(*ast.CallExpr)
				if !ok {
					break
				}
				c = next
			}
			if storage != "" && len(cols) == 1 {
				cols = []string{storage}
			}
			if len(cols) > 0 {
				out = append(out, Unique{Table: table, Columns: cols, Where: fmt.Sprintf("%s:%d", name, fset.Position(call.Pos()).Line)})
			}
			return false
		})
	}
	return out
}

func selName(e ast.Expr) string {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		return sel.Sel.Name
	}
	return ""
}

func stringLit(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return strings.ToLower(s)
}

// entTable names an ent type's table as ent does: snake case, plural.
func entTable(typeName string) string { return sqltext.TableOf(typeName, true) }
