// Package sqltext finds the SQL a function sends (constant strings passed to the query
// methods of database/sql, pgx, sqlx and once.DB) and reads just enough of it to tell a
// read from an insert, the tables involved, and the locks and conflict clauses taken.
// It is not a parser: it recognises the statements check-then-insert is made of.
package sqltext

import (
	"go/ast"
	"go/constant"
	"go/types"
	"regexp"
	"strings"
)

// Kind says what a statement does.
type Kind int

// Kinds of statement.
const (
	Other Kind = iota
	Read
	Insert
	Lock
)

// Stmt is what oncelint reads from one SQL statement.
type Stmt struct {
	Kind Kind
	// Tables are the tables a read selects from; Table the table an insert writes.
	Tables []string
	Table  string
	// RowLock: a read that locks the rows it finds (FOR UPDATE, FOR SHARE, ...).
	RowLock bool
	// OnConflict: an insert with an ON CONFLICT clause.
	OnConflict bool
	// Text is the statement as written.
	Text string
}

var (
	comments  = regexp.MustCompile(`(?s)--[^\n]*|/\*.*?\*/`)
	literals  = regexp.MustCompile(`'(?:[^']|'')*'`)
	fromRE    = regexp.MustCompile(`\b(?:from|join)\s+((?:"?[a-z_][a-z0-9_$]*"?\.)?"?[a-z_][a-z0-9_$]*"?)`)
	insertRE  = regexp.MustCompile(`\binsert\s+into\s+((?:"?[a-z_][a-z0-9_$]*"?\.)?"?[a-z_][a-z0-9_$]*"?)`)
	rowLockRE = regexp.MustCompile(`\bfor\s+(?:no\s+key\s+update|update|key\s+share|share)\b`)
	lockRE    = regexp.MustCompile(`\bpg_(?:try_)?advisory_(?:xact_)?lock(?:_shared)?\b|\block\s+(?:table\s+)?[a-z_"]|\bisolation\s+level\s+serializable\b`)
	spaces    = regexp.MustCompile(`\s+`)
)

// Parse reads one statement.
func Parse(sql string) Stmt {
	s := Stmt{Text: sql}
	low := strings.ToLower(sql)
	low = comments.ReplaceAllString(low, " ")
	low = literals.ReplaceAllString(low, "''")
	low = strings.TrimSpace(low)
	switch {
	case insertRE.MatchString(low):
		s.Kind = Insert
		s.Table = unquote(insertRE.FindStringSubmatch(low)[1])
		s.OnConflict = strings.Contains(low, "on conflict")
	case lockRE.MatchString(low):
		s.Kind = Lock
	case strings.HasPrefix(low, "select") || strings.HasPrefix(low, "with"):
		s.Kind = Read
		for _, m := range fromRE.FindAllStringSubmatch(low, -1) {
			s.Tables = append(s.Tables, unquote(m[1]))
		}
		s.RowLock = rowLockRE.MatchString(low)
	}
	return s
}

func unquote(name string) string { return strings.ReplaceAll(name, `"`, "") }

// SameTable reports whether two table names (maybe schema-qualified) name one table.
func SameTable(a, b string) bool {
	if a == b {
		return true
	}
	last := func(s string) string { return s[strings.LastIndex(s, ".")+1:] }
	return (!strings.Contains(a, ".") || !strings.Contains(b, ".")) && last(a) == last(b)
}

// Normalize folds runs of white space to one space, for comparing clause text.
func Normalize(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// queryMethods are the methods and functions that send SQL given as an argument.
var queryMethods = map[string]bool{
	"Exec": true, "ExecContext": true, "Query": true, "QueryContext": true, "QueryRow": true,
	"QueryRowContext": true, "Get": true, "GetContext": true, "Select": true, "SelectContext": true,
	"Queryx": true, "QueryxContext": true, "QueryRowx": true, "QueryRowxContext": true,
	"NamedExec": true, "NamedExecContext": true, "MustExec": true, "MustExecContext": true,
	"NamedQuery": true, "NamedQueryContext": true, "Prepare": true, "PrepareContext": true,
}

// Call is one call that sends a constant SQL statement.
type Call struct {
	Call *ast.CallExpr
	Stmt Stmt
}

// Calls returns the calls in body that send constant SQL, in source order.
func Calls(info *types.Info, body *ast.BlockStmt) []Call {
	var out []Call
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := ""
		switch f := ast.Unparen(call.Fun).(type) {
		case *ast.SelectorExpr:
			name = f.Sel.Name
		case *ast.Ident:
			name = f.Name
		}
		if !queryMethods[name] {
			return true
		}
		for _, arg := range call.Args {
			tv, ok := info.Types[arg]
			if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
				continue
			}
			if st := Parse(constant.StringVal(tv.Value)); st.Kind != Other {
				out = append(out, Call{Call: call, Stmt: st})
			}
			break
		}
		return true
	})
	return out
}

// Serializable reports whether body asks for a serializable transaction through
// sql.TxOptions or pgx.TxOptions.
func Serializable(info *types.Info, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if obj := info.Uses[sel.Sel]; obj != nil && obj.Pkg() != nil {
				switch obj.Pkg().Path() + "." + obj.Name() {
				case "database/sql.LevelSerializable", "github.com/jackc/pgx/v5.Serializable":
					found = true
				}
			}
		}
		return !found
	})
	return found
}
