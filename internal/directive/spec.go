package directive

import "sort"

// valueType is what an argument's value must be.
type valueType int

const (
	exprList  valueType = iota // comma-separated Go expressions
	expr                       // one Go expression
	intOrExpr                  // a positive integer literal or a Go expression
	intLit                     // a positive integer literal
	duration                   // a positive time.Duration
	boolean                    // true or false
	tableName                  // a SQL identifier, maybe schema-qualified
	ident                      // a SQL identifier
	identList                  // comma-separated SQL identifiers
	wordList                   // comma-separated plain words (SQL text values)
	guardName                  // a guard name
	word                       // a plain word
	enum                       // one fixed word
)

// argSpec says what one argument takes and, for a missing required one, what to write.
type argSpec struct {
	typ     valueType
	only    string // the one value of an enum
	example string // shown when the argument is missing
}

// kindSpec lists the arguments of one kind in its key= form and, where it has one, in its
// table= form.
type kindSpec struct {
	args          map[string]argSpec
	required      []string
	table         map[string]argSpec // nil: the kind has no table= form
	tableRequired []string
}

var (
	nameArg    = argSpec{typ: guardName, example: "name=billing.Charge"}
	keyArg     = argSpec{typ: exprList, example: "key=order.ID"}
	tableArg   = argSpec{typ: tableName, example: "table=jobs"}
	columnsArg = argSpec{typ: identList, example: "columns=org_id,day"}
)

// withCommon adds the arguments every form takes.
func withCommon(m map[string]argSpec, table bool) map[string]argSpec {
	m["name"] = nameArg
	if table {
		m["table"] = tableArg
		m["columns"] = columnsArg
	} else {
		m["key"] = keyArg
	}
	return m
}

var specs = map[Kind]kindSpec{
	Request: {
		args:     withCommon(map[string]argSpec{}, false),
		required: []string{"key"},
	},
	Transaction: {
		args: withCommon(map[string]argSpec{
			"wait":    {typ: boolean, example: "wait=false"},
			"timeout": {typ: duration, example: "timeout=5s"},
		}, false),
		required: []string{"key"},
	},
	Statement: {
		args: withCommon(map[string]argSpec{
			"cap": {typ: intOrExpr, example: "cap=100"},
			"n":   {typ: intOrExpr, example: "n=1"},
		}, false),
		required: []string{"key", "cap"},
		table: withCommon(map[string]argSpec{
			"counter": {typ: ident, example: "counter=used"},
			"cap":     {typ: intLit, example: "cap=100"},
		}, true),
		tableRequired: []string{"columns", "counter", "cap"},
	},
	Episode: {
		args:     withCommon(map[string]argSpec{}, false),
		required: []string{"key"},
		table: withCommon(map[string]argSpec{
			"latch": {typ: ident, example: "latch=fired_at"},
		}, true),
		tableRequired: []string{"columns", "latch"},
	},
	Open: {
		args: withCommon(map[string]argSpec{
			"stale": {typ: duration, example: "stale=20m"},
		}, false),
		required: []string{"key"},
		table: withCommon(map[string]argSpec{
			"status": {typ: ident, example: "status=status"},
			"open":   {typ: wordList, example: "open=pending,running"},
		}, true),
		tableRequired: []string{"columns", "status", "open"},
	},
	Forever: {
		args: withCommon(map[string]argSpec{
			"retain":      {typ: duration, example: "retain=720h"},
			"stale":       {typ: duration, example: "stale=1h"},
			"scope":       {typ: expr, example: "scope=org.ID"},
			"fingerprint": {typ: exprList, example: "fingerprint=req.Amount,req.Currency"},
			"repeat":      {typ: enum, only: "safe", example: "repeat=safe"},
		}, false),
		required: []string{"key"},
		table: withCommon(map[string]argSpec{
			"nulls": {typ: enum, only: "notdistinct", example: "nulls=notdistinct"},
		}, true),
		tableRequired: []string{"columns"},
	},
	Provider: {
		args: withCommon(map[string]argSpec{
			"prefix": {typ: word, example: "prefix=charge"},
			"ttl":    {typ: duration, example: "ttl=24h"},
		}, false),
		required: []string{"key"},
	},
	Lease: {
		args: withCommon(map[string]argSpec{
			"ttl":  {typ: duration, example: "ttl=10s"},
			"wait": {typ: duration, example: "wait=2s"},
		}, false),
		required: []string{"key", "ttl"},
	},
}

// argNames returns every argument name kind k takes, in either form, sorted.
func argNames(k Kind) []string {
	seen := map[string]bool{}
	s := specs[k]
	for n := range s.args {
		seen[n] = true
	}
	for n := range s.table {
		seen[n] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// kindsTaking returns the kinds that take an argument called name, in Kinds order.
func kindsTaking(name string) []string {
	var ks []string
	for _, k := range Kinds {
		s := specs[k]
		if _, ok := s.args[name]; ok {
			ks = append(ks, string(k))
		} else if _, ok := s.table[name]; ok {
			ks = append(ks, string(k))
		}
	}
	return ks
}

// nearest returns the candidate closest to s by edit distance, or "" when none is close
// enough to be a plausible typo.
func nearest(s string, candidates []string) string {
	best, bestD := "", len(s)/2+2
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
