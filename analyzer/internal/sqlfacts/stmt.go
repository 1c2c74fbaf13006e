package sqlfacts

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Kind says what a statement does.
type Kind uint8

// Kinds of statement.
const (
	Other Kind = iota
	Read
	Insert
	Update
	Delete
	Lock // an advisory lock, LOCK TABLE, or a serializable transaction
)

// Conflict says what an insert does when its row exists.
type Conflict uint8

// Conflict clauses.
const (
	NoClause   Conflict = iota
	DoNothing           // ON CONFLICT DO NOTHING, INSERT IGNORE, or a DO UPDATE that only sets
	Accumulate          // DO UPDATE adding to the row's own value with no WHERE: used = used + 1
)

// Stmt is what ONCE005 reads from one statement.
type Stmt struct {
	Kind Kind
	// Tables: the tables a read selects from, or the one table a write writes.
	Tables []string
	// Columns: the columns an insert names, or those an update sets. Keys: the columns
	// the WHERE compares. Selected: the columns a read returns, in order ("*" for all).
	// Each is empty when the statement does not name them.
	Columns, Keys, Selected []string
	// Args holds, for each column an insert names, the index of the argument its
	// VALUES item stands for ($2 is 1, the third ? is 2), or -1.
	Args     []int
	Conflict Conflict
	// RowLock: a read that locks what it finds (FOR UPDATE, FOR SHARE, an ORM's lock).
	RowLock bool
	// Exists and Count: a read that answers only whether rows exist (SELECT EXISTS,
	// an ORM's Exist) or how many (count(*), an ORM's Count). Sum: it adds values up
	// (sum, a balance), so what it returns is an amount, never an existence.
	Exists, Count, Sum bool
	// OneRow: a read that returns one row whatever it finds (an aggregate, a scalar
	// subquery), so no error says "no row".
	OneRow bool
	// SetsConst: an update assigning a literal other than a zero value (SET state =
	// 'sent', not = '' or = NULL), the mark of a state change rather than a reset. OldState: its WHERE tests the old value of a column it sets, so a
	// second run changes no row. Returning: the statement returns rows.
	SetsConst, OldState, Returning bool
	// Try: a lock's try form, which does not wait.
	Try bool
}

// Table is the table a write writes, or the first a read reads.
func (s Stmt) Table() string {
	if len(s.Tables) == 0 {
		return ""
	}
	return s.Tables[0]
}

const name = `(?:"?[a-z_][a-z0-9_$]*"?\.)?"?([a-z_][a-z0-9_$]*)"?`

var (
	commentRE   = regexp.MustCompile(`(?s)--[^\n]*|/\*.*?\*/`)
	literalRE   = regexp.MustCompile(`'(?:[^']|'')*'`)
	spaceRE     = regexp.MustCompile(`\s+`)
	fromRE      = regexp.MustCompile(`\b(?:from|join)\s+(?:only\s+)?` + name)
	insertRE    = regexp.MustCompile(`^(?:with\b.*?\)\s*)?insert\s+(?:ignore\s+)?into\s+` + name + `(?:\s+as\s+[a-z_]+)?\s*(?:\(([^)]*)\))?`)
	updateRE    = regexp.MustCompile(`^update\s+(?:only\s+)?` + name + `(?:\s+(?:as\s+)?[a-z_][a-z0-9_]*)?\s+set\s+(.*)$`)
	deleteRE    = regexp.MustCompile(`^delete\s+from\s+(?:only\s+)?` + name)
	lockRE      = regexp.MustCompile(`\bpg_(try_)?advisory_(?:xact_)?lock(?:_shared)?\b|^lock\s+(?:table\s+)?[a-z_"]|\bisolation\s+level\s+serializable\b`)
	rowLockRE   = regexp.MustCompile(`\bfor\s+(?:no\s+key\s+update|update|key\s+share|share)\b`)
	whereRE     = regexp.MustCompile(`\bwhere\b`)
	endRE       = regexp.MustCompile(`\b(?:returning|order\s+by|group\s+by|limit|for\s+(?:update|share|no\s+key|key))\b`)
	compareRE   = regexp.MustCompile(name + `\s*(?:=|<>|!=|<=|>=|<|>|\bin\b|\bis\b|\blike\b|\bbetween\b|\bnot\s+in\b)`)
	andRE       = regexp.MustCompile(`\s+and\s+`)
	testRE      = regexp.MustCompile(`^\(?\s*` + name + `\s*(<=|>=|<>|!=|=|<|>|is\s+not\s+null\b|is\s+null\b|is\s+not\s+(?:true|false)\b|is\s+(?:true|false)\b)\s*(.*?)\)?\s*$`)
	constRE     = regexp.MustCompile(`^(?:'(?:[^']|'')*'|-?[0-9]+(?:\.[0-9]+)?|true|false|null)$`)
	conflictRE  = regexp.MustCompile(`\bon\s+(?:conflict\b(.*)|duplicate\s+key\s+update\b(.*))$`)
	doUpdateRE  = regexp.MustCompile(`\bdo\s+update\s+set\b(.*)$`)
	qualifiedRE = regexp.MustCompile(`(?:([a-z_][a-z0-9_]*)\.)?\b([a-z_][a-z0-9_]*)\b`)
	selectRE    = regexp.MustCompile(`^select\s+(?:distinct\s+)?(.*?)\s+from\s`)
	identRE     = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	zeroRE      = regexp.MustCompile(`^(?:''|0|false|null)$`)
	valuesRE    = regexp.MustCompile(`\)\s*values\s*\(`)
	oneRowRE    = regexp.MustCompile(`^select\s+(?:count|exists|coalesce|sum|avg|max|min)\s*\(|^select\s+\(\s*select\b`)
	sumRE       = regexp.MustCompile(`^select\s+(?:distinct\s+)?(?:coalesce\s*\(\s*)?(?:\(\s*select\s+)?(?:sum|avg|max|min)\s*\(`)
)

// notColumns are the words compareRE can take for a column.
var notColumns = map[string]bool{"not": true, "and": true, "or": true, "where": true, "exists": true, "select": true}

// Parse reads one statement. It is not a parser: it recognises the statements a
// check-then-insert is made of, and says Other for the rest.
func Parse(sql string) Stmt {
	low := strings.TrimSpace(spaceRE.ReplaceAllString(commentRE.ReplaceAllString(strings.ToLower(sql), " "), " "))
	bare := literalRE.ReplaceAllString(low, "''") // no literal can look like a keyword
	var s Stmt
	switch {
	case lockRE.MatchString(bare):
		s.Kind, s.Try = Lock, strings.Contains(bare, "pg_try_")
	case insertRE.MatchString(bare):
		m := insertRE.FindStringSubmatch(bare)
		s.Kind, s.Tables = Insert, []string{m[1]}
		s.Columns = columnList(m[2])
		s.Args = valueArgs(bare, len(s.Columns))
		s.Returning = strings.Contains(bare, " returning ")
		if strings.HasPrefix(bare, "insert ignore") {
			s.Conflict = DoNothing
		}
		if c := conflictRE.FindStringSubmatch(bare); c != nil {
			s.Conflict = DoNothing
			set := c[2] // MySQL's ON DUPLICATE KEY UPDATE has no WHERE
			if u := doUpdateRE.FindStringSubmatch(c[1]); u != nil {
				set = u[1]
			}
			set, where := splitWhere(set)
			if where == "" && accumulates(set) {
				s.Conflict = Accumulate
			}
		}
	case updateRE.MatchString(bare):
		m := updateRE.FindStringSubmatch(low)
		if m == nil {
			return s
		}
		s.Kind, s.Tables = Update, []string{m[1]}
		set, where := splitWhere(m[2])
		s.Keys = whereKeys(literalRE.ReplaceAllString(where, "''"))
		s.Returning = strings.Contains(bare, " returning ")
		assigned := map[string]string{}
		for _, item := range SplitTop(set) {
			col, expr, ok := strings.Cut(item, "=")
			if !ok {
				continue
			}
			col = lastPart(strings.TrimSpace(col))
			expr = strings.TrimSpace(expr)
			assigned[col] = expr
			s.Columns = append(s.Columns, col)
			s.SetsConst = s.SetsConst || constRE.MatchString(expr) && !zeroRE.MatchString(expr)
		}
		s.OldState = testsOld(assigned, where)
	case deleteRE.MatchString(bare):
		s.Kind, s.Tables = Delete, []string{deleteRE.FindStringSubmatch(bare)[1]}
	case strings.HasPrefix(bare, "select") || strings.HasPrefix(bare, "with"):
		s.Kind = Read
		for _, m := range fromRE.FindAllStringSubmatch(bare, -1) {
			if !slices.Contains(s.Tables, m[1]) && m[1] != "select" {
				s.Tables = append(s.Tables, m[1])
			}
		}
		if loc := whereRE.FindStringIndex(bare); loc != nil {
			s.Keys = whereKeys(bare[loc[1]:])
		}
		s.RowLock = rowLockRE.MatchString(bare)
		if m := selectRE.FindStringSubmatch(bare); m != nil {
			for _, item := range SplitTop(m[1]) {
				f := strings.Fields(item)
				col := lastPart(f[len(f)-1])
				if !identRE.MatchString(col) {
					col = "" // an expression: it keeps its place
				}
				s.Selected = append(s.Selected, col)
			}
		}
		s.Exists = strings.HasPrefix(bare, "select exists") || strings.HasPrefix(bare, "select 1 ") || strings.HasPrefix(bare, "select true ")
		s.Count = strings.HasPrefix(bare, "select count(")
		s.Sum = sumRE.MatchString(bare)
		s.OneRow = oneRowRE.MatchString(bare)
	}
	return s
}

// valueArgs returns, for each of n columns, the argument its item of the first VALUES
// list stands for, or -1.
func valueArgs(bare string, n int) []int {
	loc := valuesRE.FindStringIndex(bare)
	if loc == nil {
		return nil
	}
	items := SplitTop(inParens(bare, loc[1]-1))
	if len(items) != n {
		return nil
	}
	out := make([]int, n)
	q := 0
	for i, it := range items {
		it = strings.TrimSpace(it)
		out[i] = -1
		switch {
		case it == "?":
			out[i] = q
			q++
		case strings.HasPrefix(it, "$"):
			if k, err := strconv.Atoi(it[1:]); err == nil {
				out[i] = k - 1
			}
		}
	}
	return out
}

// splitWhere splits "a = 1, b = 2 where x = 1 returning id" into the SET list and the
// WHERE condition, without what follows it.
func splitWhere(rest string) (set, where string) {
	loc := whereRE.FindStringIndex(rest)
	if loc == nil {
		if e := endRE.FindStringIndex(rest); e != nil {
			rest = rest[:e[0]]
		}
		return rest, ""
	}
	set, where = rest[:loc[0]], rest[loc[1]:]
	if e := endRE.FindStringIndex(where); e != nil {
		where = where[:e[0]]
	}
	return set, where
}

// whereKeys returns the columns a condition compares, in order, once each.
func whereKeys(where string) []string {
	if e := endRE.FindStringIndex(where); e != nil {
		where = where[:e[0]]
	}
	var keys []string
	for _, m := range compareRE.FindAllStringSubmatch(where, -1) {
		if !notColumns[m[1]] && !slices.Contains(keys, m[1]) {
			keys = append(keys, m[1])
		}
	}
	return keys
}

// WhereKeys returns the columns an ORM's condition text compares ("email = ? AND
// org_id = ?").
func WhereKeys(cond string) []string {
	return whereKeys(literalRE.ReplaceAllString(strings.ToLower(cond), "''"))
}

// testsOld reports whether where tests the current value of a column that assigned
// gives a new one, in a way the new value fails: a range comparison (lock_until < now()
// beside SET lock_until = ...), IS NULL beside a non-NULL value, or equality with a
// constant other than the one assigned (state = 'pending' beside SET state = 'sent').
// A second run of such a statement changes no row. An old value compared with a
// parameter (state = ANY($1)) is not known to fail.
func testsOld(assigned map[string]string, where string) bool {
	for _, cond := range andRE.Split(where, -1) {
		m := testRE.FindStringSubmatch(strings.TrimSpace(cond))
		if m == nil {
			continue
		}
		val, ok := assigned[m[1]]
		if !ok {
			continue
		}
		op, rhs := m[2], strings.TrimSpace(m[3])
		switch {
		case op == "<" || op == ">" || op == "<=" || op == ">=":
			return true
		case op == "is null" || op == "is not true" || op == "is not false":
			return val != "null"
		case op == "is not null":
			return val == "null"
		case op == "is true" || op == "is false":
			return val != strings.TrimPrefix(op, "is ")
		case op == "=":
			return constRE.MatchString(rhs) && rhs != val
		case op == "<>" || op == "!=":
			return constRE.MatchString(rhs) && rhs == val
		}
	}
	return false
}

// accumulates reports a SET list that assigns a column an expression of its own value
// and an operator: "used = b.used + excluded.used" does, "name = excluded.name" does not.
func accumulates(set string) bool {
	for _, item := range SplitTop(set) {
		col, expr, ok := strings.Cut(item, "=")
		col = lastPart(strings.TrimSpace(col))
		if !ok || !strings.ContainsAny(expr, "+-") {
			continue
		}
		for _, m := range qualifiedRE.FindAllStringSubmatch(expr, -1) {
			if m[2] == col && m[1] != "excluded" && m[1] != "values" {
				return true
			}
		}
	}
	return false
}

// columnList returns the column each item of a list names: email for "email",
// "lower(email)" or "email text_pattern_ops".
func columnList(list string) []string {
	var cols []string
	for _, item := range SplitTop(list) {
		item = strings.TrimSpace(item)
		for {
			open := strings.IndexByte(item, '(')
			if open < 0 {
				break
			}
			item = strings.TrimSuffix(strings.TrimSpace(item[open+1:]), ")")
		}
		if f := strings.Fields(item); len(f) > 0 {
			cols = append(cols, unquote(f[0]))
		}
	}
	return cols
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
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}

func unquote(s string) string {
	return strings.NewReplacer(`"`, "", "`", "").Replace(strings.TrimSpace(s))
}

// lastPart drops a qualifier: t.used is used.
func lastPart(s string) string {
	s = unquote(s)
	return s[strings.LastIndexByte(s, '.')+1:]
}

// SameTable reports whether two table names, either maybe schema-qualified, name one
// table.
func SameTable(a, b string) bool { return lastPart(a) == lastPart(b) }
