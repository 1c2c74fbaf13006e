package directive

import (
	"sort"
	"time"
)

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
	enum                       // one of fixed words
)

// argSpec says what one argument takes, where its value goes and, for a missing required
// one, what to write.
type argSpec struct {
	typ     valueType
	only    string // the values of an enum, separated by |
	example string // shown when the argument is missing
	// set stores the parsed value in the Directive field that holds the argument.
	set func(d *Directive, v value)
	// byDefault, when not nil, sets that field for a directive that does not give the
	// argument, once its name is known.
	byDefault func(d *Directive)
}

// value is an argument's value, parsed as its argSpec's type says: one field is set.
type value struct {
	exprs []Expr        // exprList, expr (one)
	num   IntOrExpr     // intOrExpr, intLit
	dur   time.Duration // duration
	yes   bool          // boolean; an enum, given
	text  string        // tableName, ident, guardName, word, enum (the value given)
	words []string      // identList, wordList
}

// form is the arguments of one form of a kind: those it takes and those it requires.
type form struct {
	args     map[string]argSpec
	required []string
}

var (
	nameArg = argSpec{typ: guardName, example: "name=billing.Charge",
		set: func(d *Directive, v value) { d.Name, d.NameSet = v.text, true }}
	keyArg = argSpec{typ: exprList, example: "key=order.ID",
		set: func(d *Directive, v value) { d.Key = v.exprs }}
	tableArg = argSpec{typ: tableName, example: "table=jobs",
		set: func(d *Directive, v value) { d.Table = v.text }}
	columnsArg = argSpec{typ: identList, example: "columns=org_id,day",
		set: func(d *Directive, v value) { d.Columns = v.words }}
)

// keyForm is the key= form of a kind taking args besides name= and key=, requiring key= and
// the required ones.
func keyForm(args map[string]argSpec, required ...string) form {
	args["name"], args["key"] = nameArg, keyArg
	return form{args: args, required: append([]string{"key"}, required...)}
}

// tableForm is the table= form of a kind taking args besides name=, table= and columns=,
// requiring columns= and the required ones.
func tableForm(args map[string]argSpec, required ...string) form {
	args["name"], args["table"], args["columns"] = nameArg, tableArg, columnsArg
	return form{args: args, required: append([]string{"columns"}, required...)}
}

// argNames returns every argument name kind k takes, in either form, sorted.
func argNames(k Kind) []string {
	seen := map[string]bool{}
	s := SpecOf(k)
	for n := range s.key.args {
		seen[n] = true
	}
	if s.Table != nil {
		for n := range s.Table.form.args {
			seen[n] = true
		}
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
	for _, s := range specs {
		if _, ok := s.key.args[name]; ok {
			ks = append(ks, string(s.Kind))
		} else if _, ok := s.tableArgs()[name]; ok {
			ks = append(ks, string(s.Kind))
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
