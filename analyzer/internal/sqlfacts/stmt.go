package sqlfacts

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Kind says what a statement does.
type Kind uint8

// Kinds of statement. A Lock is an advisory lock, LOCK TABLE or SERIALIZABLE.
const (
	Other Kind = iota
	Read
	Insert
	Update
	Delete
	Lock
)

// Conflict says what an insert does on conflict: nothing, or add (used = used + 1).
type Conflict uint8

// Conflict clauses.
const (
	NoClause Conflict = iota
	DoNothing
	Accumulate
)

// Stmt is what ONCE005 reads from one statement; a list is empty when it names none.
type Stmt struct {
	Kind Kind
	// Tables: those a read selects from, or the one a write writes.
	Tables []string
	// Columns inserted or set; Keys its WHERE compares; Selected, those a read returns.
	Columns, Keys, Selected []string
	// Args: for each column inserted, the argument its VALUES item stands for, or -1.
	Args     []int
	Conflict Conflict
	// A read that locks what it finds; says whether rows exist; how many; adds up
	// amounts; returns a row whatever it finds (no error says "no row").
	RowLock, Exists, Count, Sum, OneRow bool
	// An update setting a non-zero literal (a state); testing the old value of what it
	// sets, so a second run changes no row.
	SetsConst, OldState bool
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
	lockRE      = regexp.MustCompile(`\bpg_(?:try_)?advisory_(?:xact_)?lock(?:_shared)?\b|^lock\s+(?:table\s+)?[a-z_"]|\bisolation\s+level\s+serializable\b`)
	rowLockRE   = regexp.MustCompile(`\bfor\s+(?:no\s+key\s+update|update|key\s+share|share)\b`)
	whereRE     = regexp.MustCompile(`\bwhere\b`)
	endRE       = regexp.MustCompile(`\b(?:returning|order\s+by|group\s+by|limit|for\s+(?:update|share|no\s+key|key))\b`)
	compareRE   = regexp.MustCompile(`(?:\b(?:lower|upper|btrim|trim)\s*\(\s*)?` + name + `(?:\s*\))?\s*(?:=|<>|!=|<=|>=|<|>|\bin\b|\bis\b|\blike\b|\bbetween\b|\bnot\s+in\b)`)
	testRE      = regexp.MustCompile(`^\(?\s*` + name + `\s*(<=|>=|<>|!=|=|<|>|is\s+not|is)\s*(.*?)\)?\s*$`)
	constRE     = regexp.MustCompile(`^(?:'(?:[^']|'')*'|-?[0-9]+(?:\.[0-9]+)?|true|false|null)$`)
	andRE       = regexp.MustCompile(`\s+and\s+`)
	zeroRE      = regexp.MustCompile(`^(?:''|0|false|null)$`)
	conflictRE  = regexp.MustCompile(`\bon\s+(?:conflict\b.*?(?:\bdo\s+update\s+set\b(.*))?|duplicate\s+key\s+update\b(.*))$`)
	qualifiedRE = regexp.MustCompile(`(?:([a-z_][a-z0-9_]*)\.)?\b([a-z_][a-z0-9_]*)\b`)
	selectRE    = regexp.MustCompile(`^select\s+(?:distinct\s+)?(.*?)\s+from\s`)
	identRE     = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	valuesRE    = regexp.MustCompile(`\)\s*values\s*\(`)
	oneRowRE    = regexp.MustCompile(`^select\s+(?:count|exists|coalesce|sum|avg|max|min)\s*\(|^select\s+\(\s*select\b`)
	sumRE       = regexp.MustCompile(`^select\s+(?:distinct\s+)?(?:coalesce\s*\(\s*)?(?:\(\s*select\s+)?(?:sum|avg|max|min)\s*\(`)
)

// Parse reads one statement: those a check-then-insert is made of, Other the rest.
func Parse(sql string) Stmt {
	low := strings.TrimSpace(spaceRE.ReplaceAllString(commentRE.ReplaceAllString(strings.ToLower(sql), " "), " "))
	bare := literalRE.ReplaceAllString(low, "''") // no literal can look like a keyword
	var s Stmt
	_, cond := splitWhere(bare) // a DELETE's or a read's condition
	switch {
	case lockRE.MatchString(bare):
		s.Kind = Lock
	case insertRE.MatchString(bare):
		m := insertRE.FindStringSubmatch(bare)
		s.Kind, s.Tables, s.Columns = Insert, []string{m[1]}, columnList(m[2])
		if strings.HasPrefix(bare, "insert ignore") {
			s.Conflict = DoNothing
		}
		if loc := valuesRE.FindStringIndex(bare); loc != nil {
			s.Args = valueArgs(SplitTop(inParens(bare, loc[1]-1)), len(s.Columns))
		}
		if c := conflictRE.FindStringSubmatch(bare); c != nil {
			s.Conflict = DoNothing
			if set, where := splitWhere(c[1] + c[2]); where == "" && accumulates(set) {
				s.Conflict = Accumulate
			}
		}
	case updateRE.MatchString(bare):
		m := updateRE.FindStringSubmatch(low)
		set, where := splitWhere(m[2])
		s.Kind, s.Tables, s.Keys = Update, []string{m[1]}, whereKeys(literalRE.ReplaceAllString(where, "''"))
		assigned := map[string]string{}
		for _, item := range SplitTop(set) {
			if col, expr, ok := strings.Cut(item, "="); ok {
				col, expr = lastPart(col), strings.TrimSpace(expr)
				assigned[col], s.Columns = expr, append(s.Columns, col)
				s.SetsConst = s.SetsConst || constRE.MatchString(expr) && !zeroRE.MatchString(expr)
			}
		}
		s.OldState = testsOld(assigned, where)
	case deleteRE.MatchString(bare):
		s.Kind, s.Tables, s.Keys = Delete, []string{deleteRE.FindStringSubmatch(bare)[1]}, whereKeys(cond)
	case strings.HasPrefix(bare, "select") || strings.HasPrefix(bare, "with"):
		s.Kind, s.Tables, s.Keys = Read, firstGroups(fromRE, bare, "select"), whereKeys(cond)
		if m := selectRE.FindStringSubmatch(bare); m != nil {
			for _, item := range SplitTop(m[1]) {
				f := strings.Fields(item)
				col := lastPart(f[len(f)-1])
				s.Selected = append(s.Selected, map[bool]string{true: col}[identRE.MatchString(col)])
			}
		}
		s.RowLock, s.Count, s.Sum, s.OneRow = rowLockRE.MatchString(bare), strings.HasPrefix(bare, "select count("), sumRE.MatchString(bare), oneRowRE.MatchString(bare)
		s.Exists = strings.HasPrefix(bare, "select exists") || strings.HasPrefix(bare, "select 1 ") || strings.HasPrefix(bare, "select true ")
	}
	return s
}

func valueArgs(items []string, n int) []int {
	if len(items) != n {
		return nil
	}
	out, q := make([]int, n), 0
	for i, it := range items {
		it, out[i] = strings.TrimSpace(it), -1
		if it == "?" {
			out[i], q = q, q+1
		} else if k, err := strconv.Atoi(strings.TrimPrefix(it, "$")); err == nil && it[0] == '$' {
			out[i] = k - 1
		}
	}
	return out
}

// splitWhere splits "a = 1 where x = 1 returning id" into SET list and condition.
func splitWhere(rest string) (set, where string) {
	if loc := whereRE.FindStringIndex(rest); loc != nil {
		rest, where = rest[:loc[0]], rest[loc[1]:]
	}
	return cutEnd(rest), cutEnd(where)
}

// cutEnd cuts s before a clause that ends a SET list or a condition (RETURNING, LIMIT).
func cutEnd(s string) string {
	if e := endRE.FindStringIndex(s); e != nil {
		return s[:e[0]]
	}
	return s
}

func whereKeys(where string) []string {
	return firstGroups(compareRE, cutEnd(where), "not", "and", "or", "where", "exists", "select")
}

// firstGroups returns the distinct first groups of re's matches in s, but the words skip.
func firstGroups(re *regexp.Regexp, s string, skip ...string) (out []string) {
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(skip, m[1]) && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// WhereKeys returns the columns an ORM's condition text compares ("email = ?").
func WhereKeys(cond string) []string {
	return whereKeys(literalRE.ReplaceAllString(strings.ToLower(cond), "''"))
}

// testsOld reports whether where tests a column assigned sets in a way the new value
// fails: a range, or a constant it differs from (state = 'pending', claimed IS NULL).
func testsOld(assigned map[string]string, where string) bool {
	for _, cond := range andRE.Split(where, -1) {
		m := testRE.FindStringSubmatch(strings.TrimSpace(cond))
		if m == nil {
			continue
		}
		val, ok := assigned[m[1]]
		switch op, rhs := m[2], strings.TrimSpace(m[3]); {
		case !ok:
		case strings.ContainsAny(op, "<>") && op != "<>":
			return true
		case constRE.MatchString(rhs):
			return (val == rhs) == (op == "<>" || op == "!=" || strings.HasPrefix(op, "is not"))
		}
	}
	return false
}

// accumulates reports a SET list adding to a column's own value (used = t.used + 1).
func accumulates(set string) bool {
	for _, item := range SplitTop(set) {
		col, expr, ok := strings.Cut(item, "=")
		for _, m := range qualifiedRE.FindAllStringSubmatch(expr, -1) {
			if ok && strings.ContainsAny(expr, "+-") && m[2] == lastPart(col) && m[1] != "excluded" && m[1] != "values" {
				return true
			}
		}
	}
	return false
}

// columnList returns the column each item names: email for "lower(email) DESC".
func columnList(list string) []string {
	var cols []string
	for _, item := range SplitTop(list) {
		for strings.Contains(item, "(") {
			item = strings.TrimSuffix(strings.TrimSpace(item[strings.IndexByte(item, '(')+1:]), ")")
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
	for i, r := range s + "," {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			if strings.TrimSpace(s[start:min(i, len(s))]) != "" {
				out = append(out, s[start:min(i, len(s))])
			}
			start = i + 1
		}
	}
	return out
}

func unquote(s string) string { return strings.Trim(strings.TrimSpace(s), "\"`") }

func lastPart(s string) string {
	s = strings.ReplaceAll(unquote(s), `"`, "")
	return s[strings.LastIndexByte(s, '.')+1:]
}

// SameTable reports whether two table names, maybe schema-qualified, name one table.
func SameTable(a, b string) bool { return lastPart(a) == lastPart(b) }
