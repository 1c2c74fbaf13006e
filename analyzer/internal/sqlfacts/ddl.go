package sqlfacts

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Unique is one unique constraint, unique index or primary key.
type Unique struct {
	Table   string
	Columns []string
	Primary bool
	// Generated: a key the database fills (serial, identity, a default), which a repeat
	// does not make again.
	Generated bool
	// Where declares it: "migrations/0003_users.sql:12", or a model's type.
	Where string
}

const (
	ident   = `(?:[a-z_][a-z0-9_$]*|"[^"]+"|` + "`[^`]+`" + `)`
	tableID = `(?:` + ident + `\.)?(` + ident + `)`
)

var (
	createTableRE = regexp.MustCompile(`\bcreate\s+(?:(?:global\s+|local\s+)?(?:temporary|temp|unlogged)\s+)?table\s+(?:if\s+not\s+exists\s+)?` + tableID + `\s*\(`)
	uniqueIndexRE = regexp.MustCompile(`\bcreate\s+unique\s+index\s+(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?(?:` + ident + `\s+)?on\s+(?:only\s+)?` + tableID + `\s*(?:using\s+[a-z_]+\s*)?\(`)
	alterTableRE  = regexp.MustCompile(`\balter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?` + tableID + `\s+`)
	// A table constraint, in CREATE TABLE or after ALTER TABLE .. ADD: [CONSTRAINT name]
	// UNIQUE [NULLS NOT DISTINCT] [KEY|INDEX name] (cols), or PRIMARY KEY (cols).
	tableConstraintRE = regexp.MustCompile(`^(?:add\s+)?(?:constraint\s+` + ident + `\s+)?(unique|primary\s+key)\s*(?:nulls\s+(?:not\s+)?distinct\s*)?(?:(?:key|index)\s*` + ident + `?\s*)?\(`)
	addColumnRE       = regexp.MustCompile(`^add\s+(?:column\s+)?(?:if\s+not\s+exists\s+)?(` + ident + `)\s`)
	primaryRE         = regexp.MustCompile(`\bprimary\s+key\b`)
	uniqueWordRE      = regexp.MustCompile(`\bunique\b`)
	generatedRE       = regexp.MustCompile(`serial\b|\bidentity\b|\bdefault\b|auto_?increment`)
	notColumnRE       = regexp.MustCompile(`^(?:constraint|check|foreign|exclude|like|index|key|fulltext|spatial)\b`)
)

// DefinesTable reports whether SQL text holds a CREATE TABLE.
func DefinesTable(text string) bool { return createTableRE.MatchString(strings.ToLower(text)) }

// ParseDDL returns the unique constraints, unique indexes (partial ones too: the rows
// they cover are those a read repeating the predicate looks for) and primary keys that
// SQL text declares. where names the text's origin; lines are added to it.
func ParseDDL(where, text string) []Unique {
	low := strings.ToLower(text)
	low = commentRE.ReplaceAllStringFunc(low, blank)
	low = literalRE.ReplaceAllStringFunc(low, blank)
	at := func(off int) string { return fmt.Sprintf("%s:%d", where, strings.Count(text[:off], "\n")+1) }
	var out []Unique
	for _, m := range uniqueIndexRE.FindAllStringSubmatchIndex(low, -1) {
		out = append(out, Unique{Table: unquote(low[m[2]:m[3]]), Columns: columnList(inParens(low, m[1]-1)), Where: at(m[0])})
	}
	for _, m := range createTableRE.FindAllStringSubmatchIndex(low, -1) {
		out = append(out, items(unquote(low[m[2]:m[3]]), SplitTop(inParens(low, m[1]-1)), false, at(m[0]))...)
	}
	for _, m := range alterTableRE.FindAllStringSubmatchIndex(low, -1) {
		body := low[m[1]:]
		if end := strings.IndexByte(body, ';'); end >= 0 {
			body = body[:end]
		}
		out = append(out, items(unquote(low[m[2]:m[3]]), SplitTop(body), true, at(m[0]))...)
	}
	return out
}

// items reads the items of a CREATE TABLE, or the actions of an ALTER TABLE (alter):
// table constraints, and columns declared UNIQUE or PRIMARY KEY. A key with a column the
// database fills (serial, identity, a default) is Generated.
func items(table string, list []string, alter bool, where string) []Unique {
	var out []Unique
	generated := map[string]bool{}
	for _, item := range list {
		item = strings.TrimSpace(item)
		if c := tableConstraintRE.FindStringSubmatchIndex(item); c != nil {
			u := Unique{Table: table, Columns: columnList(inParens(item, c[1]-1)), Primary: item[c[2]] == 'p', Where: where}
			u.Generated = slices.ContainsFunc(u.Columns, func(c string) bool { return generated[c] })
			out = append(out, u)
			continue
		}
		col := ""
		if alter {
			m := addColumnRE.FindStringSubmatch(item)
			if m == nil {
				continue
			}
			col, item = m[1], item[len(m[0]):]
		} else if f := strings.Fields(item); len(f) > 1 && !notColumnRE.MatchString(item) {
			col, item = f[0], strings.Join(f[1:], " ")
		}
		col = unquote(col)
		generated[col] = generatedRE.MatchString(item)
		switch {
		case col == "":
		case primaryRE.MatchString(item):
			out = append(out, Unique{Table: table, Columns: []string{col}, Primary: true, Generated: generated[col], Where: where})
		case uniqueWordRE.MatchString(item):
			out = append(out, Unique{Table: table, Columns: []string{col}, Where: where})
		}
	}
	return out
}

// blank replaces a match with spaces, keeping offsets and line breaks where they were.
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
			if depth--; depth == 0 {
				return s[open+1 : i]
			}
		}
	}
	return s[open+1:]
}

// ParseGo returns the unique constraints a Go file declares without type information:
// DDL in its string literals (adjacent literals joined with + read as one), and the
// unique fields and indexes of ent schema types (field.String("email").Unique(),
// index.Fields("a", "b").Unique(), where field and index are ent's schema packages).
func ParseGo(where string, src []byte) []Unique {
	var out []Unique
	fset := token.NewFileSet()
	file := fset.AddFile(where, -1, len(src))
	var sc scanner.Scanner
	sc.Init(file, src, nil, 0)
	var text strings.Builder
	var start token.Pos
	var prev token.Token
	flush := func() {
		if text.Len() > 0 {
			for _, u := range ParseDDL(where, text.String()) {
				u.Where = fmt.Sprintf("%s:%d", where, fset.Position(start).Line)
				out = append(out, u)
			}
		}
		text.Reset()
	}
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		switch {
		case tok == token.STRING:
			if prev != token.ADD {
				flush()
				start = pos
			}
			if s, err := strconv.Unquote(lit); err == nil {
				text.WriteString(s)
			}
		case tok == token.ADD && prev == token.STRING:
		default:
			flush()
		}
		prev = tok
	}
	flush()
	return append(out, parseEnt(where, src)...)
}

// parseEnt reads ent schema types: in func (T) Fields(), a field chain ending in
// Unique() (StorageKey naming its column); in func (T) Indexes(), index.Fields(...)
// ending in Unique(). The table is ent's name for T.
func parseEnt(where string, src []byte) []Unique {
	if !strings.Contains(string(src), "entgo.io/ent/schema/") {
		return nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, where, src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	names := map[string]string{} // local name → "field" or "index"
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if kind, ok := strings.CutPrefix(path, "entgo.io/ent/schema/"); ok && (kind == "field" || kind == "index") {
			local := kind
			if imp.Name != nil {
				local = imp.Name.Name
			}
			names[local] = kind
		}
	}
	var out []Unique
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 || fd.Body == nil {
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
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 0 || selName(call.Fun) != "Unique" {
				return true
			}
			var cols []string
			storage := ""
			for c := call; c != nil; {
				sel, _ := c.Fun.(*ast.SelectorExpr)
				if sel == nil {
					break
				}
				if sel.Sel.Name == "StorageKey" && len(c.Args) == 1 {
					storage = stringLit(c.Args[0])
				}
				if pkg, ok := sel.X.(*ast.Ident); ok {
					switch names[pkg.Name] {
					case "index":
						for _, a := range c.Args {
							cols = append(cols, stringLit(a))
						}
					case "field":
						if len(c.Args) > 0 {
							cols = []string{stringLit(c.Args[0])}
						}
					}
					break
				}
				c, _ = sel.X.(*ast.CallExpr)
			}
			if storage != "" && len(cols) == 1 {
				cols = []string{storage}
			}
			if len(cols) > 0 && !slices.Contains(cols, "") {
				out = append(out, Unique{Table: TableOf(id.Name, true), Columns: cols, Where: fmt.Sprintf("%s:%d", where, fset.Position(call.Pos()).Line)})
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
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		s, _ := strconv.Unquote(lit.Value)
		return strings.ToLower(s)
	}
	return ""
}
