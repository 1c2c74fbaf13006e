package sqlfacts

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Unique is one unique constraint, unique index or primary key. Generated: a key the
// database fills (serial, identity, a default), which a repeat does not make again.
type Unique struct {
	Table              string
	Columns            []string
	Primary, Generated bool
}

const (
	ident   = `(?:[a-z_][a-z0-9_$]*|"[^"]+"|` + "`[^`]+`" + `)`
	tableID = `(?:` + ident + `\.)?(` + ident + `)`
)

var (
	createTableRE = regexp.MustCompile(`\bcreate\s+(?:(?:global\s+|local\s+)?(?:temporary|temp|unlogged)\s+)?table\s+(?:if\s+not\s+exists\s+)?` + tableID + `\s*\(`)
	uniqueIndexRE = regexp.MustCompile(`\bcreate\s+unique\s+index\s+(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?(?:` + ident + `\s+)?on\s+(?:only\s+)?` + tableID + `\s*(?:using\s+[a-z_]+\s*)?\(`)
	alterTableRE  = regexp.MustCompile(`\balter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?` + tableID + `\s+`)
	// [ADD] [CONSTRAINT name] UNIQUE [NULLS NOT DISTINCT] [KEY|INDEX name] (, or PRIMARY KEY (
	constraintRE = regexp.MustCompile(`^(?:add\s+)?(?:constraint\s+` + ident + `\s+)?(unique|primary\s+key)\s*(?:nulls\s+(?:not\s+)?distinct\s*)?(?:(?:key|index)\s*` + ident + `?\s*)?\(`)
	addColumnRE  = regexp.MustCompile(`^add\s+(?:column\s+)?(?:if\s+not\s+exists\s+)?(` + ident + `)\s`)
	keyRE        = regexp.MustCompile(`\b(primary\s+key|unique)\b`)
	generatedRE  = regexp.MustCompile(`serial\b|\bidentity\b|\bdefault\b|auto_?increment`)
	notColumnRE  = regexp.MustCompile(`^(?:constraint|check|foreign|exclude|like|index|key|fulltext|spatial)\b`)
	notNewlineRE = regexp.MustCompile(`[^\n]`)
)

// ParseDDL returns the unique constraints, unique indexes (partial too) and primary
// keys SQL text declares.
func ParseDDL(text string) (out []Unique) {
	low := literalRE.ReplaceAllStringFunc(commentRE.ReplaceAllStringFunc(strings.ToLower(text), blank), blank)
	for _, m := range uniqueIndexRE.FindAllStringSubmatchIndex(low, -1) {
		out = append(out, Unique{Table: unquote(low[m[2]:m[3]]), Columns: columnList(inParens(low, m[1]-1))})
	}
	for _, m := range createTableRE.FindAllStringSubmatchIndex(low, -1) {
		out = append(out, items(unquote(low[m[2]:m[3]]), SplitTop(inParens(low, m[1]-1)), false)...)
	}
	for _, m := range alterTableRE.FindAllStringSubmatchIndex(low, -1) {
		body, _, _ := strings.Cut(low[m[1]:], ";")
		out = append(out, items(unquote(low[m[2]:m[3]]), SplitTop(body), true)...)
	}
	return out
}

// items reads the items of a CREATE TABLE, or the actions of an ALTER TABLE (alter):
// table constraints, and columns declared UNIQUE or PRIMARY KEY.
func items(table string, list []string, alter bool) []Unique {
	var out []Unique
	generated := map[string]bool{}
	for _, item := range list {
		item = strings.TrimSpace(item)
		if c := constraintRE.FindStringSubmatchIndex(item); c != nil {
			cols := columnList(inParens(item, c[1]-1))
			out = append(out, Unique{table, cols, item[c[2]] == 'p', slices.ContainsFunc(cols, func(c string) bool { return generated[c] })})
			continue
		}
		col := ""
		if m := addColumnRE.FindStringSubmatch(item); alter && m != nil {
			col, item = m[1], item[len(m[0]):]
		} else if f := strings.Fields(item); !alter && len(f) > 1 && !notColumnRE.MatchString(item) {
			col, item = f[0], strings.Join(f[1:], " ")
		}
		col = unquote(col)
		generated[col] = generatedRE.MatchString(item)
		if k := keyRE.FindString(item); col != "" && k != "" {
			out = append(out, Unique{table, []string{col}, k[0] == 'p', k[0] == 'p' && generated[col]})
		}
	}
	return out
}

// blank writes a space for each character of s but a newline.
func blank(s string) string { return notNewlineRE.ReplaceAllLiteralString(s, " ") }

func inParens(s string, open int) string {
	depth := 0
	for i := open; i < len(s); i++ {
		if s[i] == '(' {
			depth++
		} else if s[i] == ')' {
			if depth--; depth == 0 {
				return s[open+1 : i]
			}
		}
	}
	return s[open+1:]
}

// ent's schema API: a chain from its field or index package (entgo.io/ent/schema/...)
// ending in Unique() declares a unique column or index, and StorageKey names the column.
const (
	entUnique     = "Unique"
	entStorageKey = "StorageKey"
)

// ParseGo returns, without types, the DDL in a Go file's string literals (joined with
// +), and the fields and indexes of ent schema types ending in Unique().
func ParseGo(src []byte) (out []Unique) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	pkgs := map[string]string{} // local name of ent's field and index packages
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if kind, ok := strings.CutPrefix(path, "entgo.io/ent/schema/"); ok {
			pkgs[kind] = kind
			if imp.Name != nil {
				pkgs[imp.Name.Name] = kind
			}
		}
	}
	var recv *ast.Ident // the schema type whose method is being read
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			recv = nil
			if n.Recv != nil {
				recv, _ = ast.Unparen(n.Recv.List[0].Type).(*ast.Ident)
			}
		case *ast.BasicLit, *ast.BinaryExpr:
			if text, ok := literal(n.(ast.Expr)); ok {
				out = append(out, ParseDDL(text)...)
				return false
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == entUnique && recv != nil && len(n.Args) == 0 {
				if cols := entColumns(n, pkgs); len(cols) > 0 {
					out = append(out, Unique{Table: TableOf(recv.Name, true), Columns: cols})
				}
				return false
			}
		}
		return true
	})
	return out
}

func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		return s, err == nil && e.Kind == token.STRING
	case *ast.BinaryExpr:
		x, ok1 := literal(e.X)
		y, ok2 := literal(e.Y)
		return x + y, ok1 && ok2 && e.Op == token.ADD
	}
	return "", false
}

// entColumns returns the columns of an ent field or index chain ending in Unique().
func entColumns(call *ast.CallExpr, pkgs map[string]string) []string {
	var cols []string
	storage := ""
	for c := call; c != nil; {
		sel, _ := c.Fun.(*ast.SelectorExpr)
		if sel == nil {
			break
		}
		if sel.Sel.Name == entStorageKey && len(c.Args) == 1 {
			storage = stringLit(c.Args[0])
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkgs[pkg.Name] == "index" { // index.Fields("a", "b")
			for _, a := range c.Args {
				cols = append(cols, stringLit(a))
			}
		} else if ok && pkgs[pkg.Name] == "field" && len(c.Args) > 0 { // field.String("email")
			cols = []string{stringLit(c.Args[0])}
		}
		c, _ = sel.X.(*ast.CallExpr)
	}
	if storage != "" && len(cols) == 1 {
		cols = []string{storage}
	}
	if slices.Contains(cols, "") {
		return nil
	}
	return cols
}

func stringLit(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		s, _ := strconv.Unquote(lit.Value)
		return strings.ToLower(s)
	}
	return ""
}
