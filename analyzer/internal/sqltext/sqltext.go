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
	"slices"
	"strconv"
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
	Update
	Delete
)

// Stmt is what oncelint reads from one SQL statement.
type Stmt struct {
	Kind Kind
	// Tables are the tables a read selects from; Table the table an insert or an update
	// writes.
	Tables []string
	Table  string
	// RowLock: a read that locks the rows it finds (FOR UPDATE, FOR SHARE, ...).
	RowLock bool
	// OnConflict: an insert with an ON CONFLICT clause.
	OnConflict bool
	// Columns are the columns an insert names; Keys the columns a read's WHERE compares
	// (org_id in "WHERE org_id = $1 AND status IN (...)"). Either is empty when the
	// statement does not name them. Values are the items of an insert's first VALUES
	// list, one per column ("$1", "?", "now()"), when there are as many as Columns.
	Columns, Keys, Values []string
	// Upsert: the conflict clause is DO UPDATE. UpdateWhere: the DO UPDATE has a WHERE,
	// so it can refuse (the statement promise's used + n <= cap). Accumulates: it sets a
	// column from the row's own value (used = used + n, balance = balance - amount), so
	// the row it leaves depends on how many calls got there.
	Upsert, UpdateWhere, Accumulates bool
	// Refuses: a repeat of the statement changes no row, so its row count (or the row
	// it returns, or a try-lock's result) tells the first call from a repeat. See
	// refuses for which statements do.
	Refuses bool
	// Text is the statement as written.
	Text string
	// ORM names the library a statement built with an ORM came from; Model is its model
	// type ("shop/models.User"), whose TableName method, when TableMethod is set, may
	// name another table than Table, the ORM's default name for the type. FindOrCreate:
	// one call that reads and then inserts (gorm's FirstOrCreate).
	ORM                       ORM
	Model                     string
	TableMethod, FindOrCreate bool
}

var (
	comments  = regexp.MustCompile(`(?s)--[^\n]*|/\*.*?\*/`)
	literals  = regexp.MustCompile(`'(?:[^']|'')*'`)
	fromRE    = regexp.MustCompile(`\b(?:from|join)\s+((?:"?[a-z_][a-z0-9_$]*"?\.)?"?[a-z_][a-z0-9_$]*"?)`)
	insertRE  = regexp.MustCompile(`\binsert\s+into\s+((?:"?[a-z_][a-z0-9_$]*"?\.)?"?[a-z_][a-z0-9_$]*"?)`)
	deleteRE  = regexp.MustCompile(`^delete\s+from\s+(?:only\s+)?((?:"?[a-z_][a-z0-9_$]*"?\.)?"?[a-z_][a-z0-9_$]*"?)`)
	tryLockRE = regexp.MustCompile(`\bpg_try_advisory_(?:xact_)?lock\b`)
	updateSet = regexp.MustCompile(`^update\s+\S+(?:\s+(?:as\s+)?[a-z_][a-z0-9_]*)?\s+set\b(.*)$`)
	updateRE  = regexp.MustCompile(`^update\s+(?:only\s+)?((?:"?[a-z_][a-z0-9_$]*"?\.)?"?[a-z_][a-z0-9_$]*"?)`)
	doUpdate  = regexp.MustCompile(`\bon\s+conflict\b.*?\bdo\s+update\s+set\b(.*)$`)
	setEnd    = regexp.MustCompile(`\b(?:where|returning)\b`)
	nameRE    = regexp.MustCompile(`(?:"?([a-z_][a-z0-9_$]*)"?\.)?"?([a-z_][a-z0-9_$]*)"?`)
	rowLockRE = regexp.MustCompile(`\bfor\s+(?:no\s+key\s+update|update|key\s+share|share)\b`)
	lockRE    = regexp.MustCompile(`\bpg_(?:try_)?advisory_(?:xact_)?lock(?:_shared)?\b|(?:^|;)\s*lock\s+(?:table\s+)?[a-z_"]|\bisolation\s+level\s+serializable\b`)
	spaces    = regexp.MustCompile(`\s+`)
	columnsRE = regexp.MustCompile(`\binsert\s+into\s+[^\s(]+(?:\s+as\s+[a-z_][a-z0-9_]*)?\s*\(([^)]*)\)`)
	whereRE   = regexp.MustCompile(`\bwhere\b`)
	valuesRE  = regexp.MustCompile(`\)\s*values\s*\(`)
	keyRE     = regexp.MustCompile(`(?:"?[a-z_][a-z0-9_$]*"?\.)?"?([a-z_][a-z0-9_$]*)"?\s*(?:=|<>|!=|<=|>=|<|>|\bin\b|\bis\b|\blike\b|\bbetween\b)`)
)

// sqlWords are keywords keyRE can take for a column ("not in", "and is").
var sqlWords = map[string]bool{"not": true, "and": true, "or": true, "where": true, "exists": true}

// Arg returns the index, among the arguments that follow the statement, of the value an
// insert gives column col: $n is argument n-1, and the k-th ? argument k-1. It is false
// when the value is no placeholder (a literal, a function call) or the column is not
// named.
func (s Stmt) Arg(col string) (int, bool) {
	i := slices.Index(s.Columns, col)
	if i < 0 || i >= len(s.Values) {
		return 0, false
	}
	v := s.Values[i]
	if n, err := strconv.Atoi(strings.TrimPrefix(v, "$")); err == nil && strings.HasPrefix(v, "$") && n > 0 {
		return n - 1, true
	}
	if v != "?" {
		return 0, false
	}
	k := 0
	for _, w := range s.Values[:i] {
		if w == "?" {
			k++
		}
	}
	return k, true
}

// topLevelItems splits the list that rest opens ("$1, now(), $2) on conflict ...") at
// its commas outside parentheses, up to the parenthesis that closes it.
func topLevelItems(rest string) []string {
	var items []string
	depth, start := 0, 0
	for i, r := range rest {
		switch r {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return append(items, strings.TrimSpace(rest[start:i]))
			}
			depth--
		case ',':
			if depth == 0 {
				items = append(items, strings.TrimSpace(rest[start:i]))
				start = i + 1
			}
		}
	}
	return nil
}

// Parse reads one statement.
func Parse(sql string) Stmt {
	s := Stmt{Text: sql}
	low := strings.ToLower(sql)
	low = comments.ReplaceAllString(low, " ")
	withLiterals := spaces.ReplaceAllString(strings.TrimSpace(low), " ")
	low = literals.ReplaceAllString(low, "''")
	low = strings.TrimSpace(low)
	switch {
	case insertRE.MatchString(low):
		s.Kind = Insert
		s.Table = unquote(insertRE.FindStringSubmatch(low)[1])
		s.OnConflict = strings.Contains(low, "on conflict")
		if m := columnsRE.FindStringSubmatch(low); m != nil {
			for _, c := range strings.Split(m[1], ",") {
				s.Columns = append(s.Columns, unquote(strings.TrimSpace(c)))
			}
		}
		if loc := valuesRE.FindStringIndex(low); loc != nil {
			if vals := topLevelItems(low[loc[1]:]); len(vals) == len(s.Columns) {
				s.Values = vals
			}
		}
		if m := doUpdate.FindStringSubmatch(spaces.ReplaceAllString(low, " ")); m != nil {
			s.Upsert = true
			set := m[1]
			if loc := setEnd.FindStringIndex(set); loc != nil {
				s.UpdateWhere = set[loc[0]:loc[1]] == "where"
				set = set[:loc[0]]
			}
			s.Accumulates = accumulates(set)
		}
	case lockRE.MatchString(low):
		s.Kind = Lock
	case strings.HasPrefix(low, "select") || strings.HasPrefix(low, "with"):
		s.Kind = Read
		for _, m := range fromRE.FindAllStringSubmatch(low, -1) {
			s.Tables = append(s.Tables, unquote(m[1]))
		}
		s.RowLock = rowLockRE.MatchString(low)
		if loc := whereRE.FindStringIndex(low); loc != nil {
			for _, m := range keyRE.FindAllStringSubmatch(low[loc[1]:], -1) {
				if !sqlWords[m[1]] && !slices.Contains(s.Keys, m[1]) {
					s.Keys = append(s.Keys, m[1])
				}
			}
		}
	case updateRE.MatchString(low):
		s.Kind = Update
		s.Table = unquote(updateRE.FindStringSubmatch(low)[1])
	case deleteRE.MatchString(low):
		s.Kind = Delete
		s.Table = unquote(deleteRE.FindStringSubmatch(low)[1])
	}
	s.Refuses = refuses(s, withLiterals)
	return s
}

// refuses reports a statement whose repeat changes no row, the SQL of a hand-written
// latch: a DELETE (the row is gone), an insert ON CONFLICT DO NOTHING, a try-lock
// (pg_try_advisory_lock), and an UPDATE, or an upsert's DO UPDATE, whose WHERE tests
// the old value of a column its SET changes in a way the new value fails:
//
//   - a range comparison (lock_until < $3 beside SET lock_until = $2, a lease; version <
//     excluded.version), which the value set moves past;
//   - IS NULL (claimed_by IS NULL beside SET claimed_by = $1), or IS NOT NULL beside
//     SET col = NULL;
//   - equality with a constant the SET does not assign again (state = 'pending' beside
//     SET state = 'sent', paid = false beside SET paid = true), or inequality with the
//     constant it assigns.
//
// An UPDATE that only names its row (SET is_cancelled = true WHERE user_id = $1), or
// tests the old value against a parameter (state = ANY($4) beside SET state = $1: the
// caller may allow the new state as an old one), is refused by nothing: a repeat
// updates the row again. low is the lower-case statement with literals kept.
func refuses(s Stmt, low string) bool {
	switch s.Kind {
	case Delete:
		return true
	case Lock:
		return tryLockRE.MatchString(low)
	case Insert:
		if !s.OnConflict {
			return false
		}
		if !s.Upsert {
			return strings.Contains(low, "do nothing")
		}
		m := doUpdate.FindStringSubmatch(low)
		if m == nil {
			return false
		}
		set, where, ok := splitWhere(m[1])
		return ok && testsOldValue(set, where)
	case Update:
		m := updateSet.FindStringSubmatch(low)
		if m == nil {
			return false
		}
		set, where, ok := splitWhere(m[1])
		return ok && testsOldValue(set, where)
	}
	return false
}

// splitWhere splits "a = 1, b = 2 where x = 1 returning id" into the SET list and the
// WHERE condition.
func splitWhere(rest string) (set, where string, ok bool) {
	loc := whereRE.FindStringIndex(rest)
	if loc == nil {
		return "", "", false
	}
	set, where = rest[:loc[0]], rest[loc[1]:]
	if r := returningRE.FindStringIndex(where); r != nil {
		where = where[:r[0]]
	}
	return set, where, true
}

var (
	returningRE = regexp.MustCompile(`\breturning\b`)
	andRE       = regexp.MustCompile(`\s+and\s+`)
	testRE      = regexp.MustCompile(`^\(?\s*(?:"?[a-z_][a-z0-9_$]*"?\.)?"?([a-z_][a-z0-9_$]*)"?\s*(<=|>=|<>|!=|=|<|>|is\s+not\s+null\b|is\s+null\b|is\s+not\s+(?:true|false)\b|is\s+(?:true|false)\b)\s*(.*?)\)?\s*$`)
	constRE     = regexp.MustCompile(`^(?:'(?:[^']|'')*'|-?[0-9]+(?:\.[0-9]+)?|true|false|null)$`)
)

// testsOldValue reports whether where tests the current value of a column set assigns
// in a way the assigned value fails (see refuses).
func testsOldValue(set, where string) bool {
	assigned := map[string]string{}
	for _, item := range SplitTop(set) {
		col, expr, ok := strings.Cut(item, "=")
		if !ok {
			continue
		}
		col = unquote(strings.TrimSpace(col))
		if i := strings.LastIndex(col, "."); i >= 0 {
			col = col[i+1:]
		}
		assigned[col] = strings.TrimSpace(expr)
	}
	for _, cond := range andRE.Split(where, -1) {
		m := testRE.FindStringSubmatch(strings.TrimSpace(cond))
		if m == nil {
			continue
		}
		val, ok := assigned[m[1]]
		if !ok {
			continue
		}
		op, rhs := spaces.ReplaceAllString(m[2], " "), strings.TrimSpace(m[3])
		switch op {
		case "<", ">", "<=", ">=":
			return true
		case "is null", "is not true", "is not false":
			if val != "null" {
				return true
			}
		case "is not null":
			if val == "null" {
				return true
			}
		case "is true":
			if val != "true" {
				return true
			}
		case "is false":
			if val != "false" {
				return true
			}
		case "=":
			if constRE.MatchString(rhs) && rhs != val {
				return true
			}
		case "<>", "!=":
			if constRE.MatchString(rhs) && rhs == val {
				return true
			}
		}
	}
	return false
}

// accumulates reports whether a SET list assigns a column an expression of its own
// current value and an operator (+, - or ||): "used = b.used + excluded.used" does,
// "name = excluded.name" and "seen = greatest(t.seen, excluded.seen)" do not.
func accumulates(set string) bool {
	for _, item := range SplitTop(set) {
		col, expr, ok := strings.Cut(item, "=")
		col = unquote(strings.TrimSpace(col))
		if !ok || strings.ContainsAny(col, "(.") || !strings.ContainsAny(expr, "+-|") {
			continue
		}
		for _, m := range nameRE.FindAllStringSubmatch(expr, -1) {
			if m[2] == col && m[1] != "excluded" {
				return true
			}
		}
	}
	return false
}

// SplitTop splits a list at the commas outside parentheses.
func SplitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func unquote(name string) string { return strings.ReplaceAll(name, `"`, "") }

// SameRows reports whether a read may look for the rows an insert makes: the read compares
// a column the insert sets (WHERE account_id = $1 AND action_key = $2 before an insert of
// account_id, action_key, ...). A read by other columns only (the parent's id, before an
// insert of a child with parent_id) is not looking for the new row. Where either side
// names no columns, it may be.
func SameRows(read, insert Stmt) bool {
	if len(read.Keys) == 0 || len(insert.Columns) == 0 {
		return true
	}
	for _, k := range read.Keys {
		if slices.Contains(insert.Columns, k) {
			return true
		}
	}
	return false
}

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
	"Raw": true, "NewRaw": true, // gorm's and bun's SQL text
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
		if call, ok := n.(*ast.CallExpr); ok {
			if st, ok := Sent(info, call); ok {
				out = append(out, Call{Call: call, Stmt: st})
			}
		}
		return true
	})
	return out
}

// Sent returns the statement call sends, if it is a query method given a constant
// statement oncelint recognises, or the call that ends an ORM's chain of builder calls
// (see ormSent).
func Sent(info *types.Info, call *ast.CallExpr) (Stmt, bool) {
	if st, ok := ormSent(info, call); ok {
		return st, true
	}
	name := ""
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.SelectorExpr:
		name = f.Sel.Name
	case *ast.Ident:
		name = f.Name
	}
	if !queryMethods[name] {
		return Stmt{}, false
	}
	for _, arg := range call.Args {
		tv, ok := info.Types[arg]
		if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
			continue
		}
		st := Parse(constant.StringVal(tv.Value))
		return st, st.Kind != Other
	}
	return Stmt{}, false
}
