package once005

import (
	"fmt"
	"slices"
	"strings"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// Op is one statement a function sends, itself or through the functions it calls, as
// its callers see it.
type Op struct {
	sqlfacts.Stmt
	// ErrAbsent: the read reports a missing row as an error (QueryRow's Scan, gorm's
	// First): err == nil means it found one.
	ErrAbsent bool
	// FindOrCreate: one call that reads and then inserts (gorm's FirstOrCreate).
	FindOrCreate bool
	// HandlesDup: the function that sends the insert handles its unique violation.
	// Claims: the function that sends the update checks it changed a row.
	HandlesDup, Claims bool
	// Param and Row are 1 + the index of the parameter (the receiver first) the
	// statement is sent through, and of the row an ORM inserts, or 0.
	Param, Row int
	// ORM names the library that built the statement, empty for SQL text.
	ORM string
}

// What a function's result tells its caller about a read it made.
const (
	resRead   uint8 = 1 << iota // the result depends on what a read found
	resAbsent                   // an error that means "no row"
	resExists                   // a bool that is true when a row exists
)

// FuncFact says, for a function's callers, what SQL it sends (the reads whose outcome
// it returns, its inserts, updates and locks; a table it both reads and writes is
// judged in the function, and left out), what its results tell of the reads, and
// whether it handles a unique violation.
type FuncFact struct {
	Ops        []Op
	Results    []uint8
	HandlesDup bool
}

// AFact marks FuncFact as a fact.
func (*FuncFact) AFact() {}

func (f *FuncFact) String() string {
	var parts []string
	for _, op := range f.Ops {
		s := describe(op)
		if op.Param > 0 {
			s += fmt.Sprintf(" via %d", op.Param)
		}
		parts = append(parts, s)
	}
	if f.HandlesDup {
		parts = append(parts, "handles unique violations")
	}
	s := "sql(" + strings.Join(parts, "; ") + ")"
	var res []string
	for _, r := range f.Results {
		words := []string{}
		for bit, w := range []string{"read", "absent", "exists"} {
			if r&(1<<bit) != 0 {
				words = append(words, w)
			}
		}
		res = append(res, strings.Join(words, "+"))
	}
	if strings.Join(res, "") != "" {
		s += " results(" + strings.Join(res, ", ") + ")"
	}
	return s
}

func describe(op Op) string {
	t := strings.Join(op.Tables, ",")
	switch op.Kind {
	case sqlfacts.Read:
		if op.RowLock {
			return "reads " + t + " for update"
		}
		return "reads " + t
	case sqlfacts.Insert:
		return "inserts " + t + [...]string{"", " or nothing", " or adds"}[op.Conflict]
	case sqlfacts.Update:
		return "updates " + t
	case sqlfacts.Lock:
		return "locks"
	}
	return fmt.Sprint(op.Kind)
}

// PackageFact holds what a package tells the packages importing it: the tables its
// models name with a TableName method, and the unique constraints it declares (a
// //once: ... table= directive, DDL in its string constants, its models' tags).
type PackageFact struct {
	Tables  map[string]string // model type name → table
	Uniques []sqlfacts.Unique
}

// AFact marks PackageFact as a fact.
func (*PackageFact) AFact() {}

func (f *PackageFact) String() string {
	var tables, uniques []string
	for m, t := range f.Tables {
		tables = append(tables, m+"="+t)
	}
	slices.Sort(tables)
	for _, u := range f.Uniques {
		uniques = append(uniques, u.Table+"("+strings.Join(u.Columns, ",")+")")
	}
	return "package(tables " + strings.Join(tables, ",") + "; uniques " + strings.Join(uniques, ",") + ")"
}

// PredicateFact marks a function of an ent generated package that builds a predicate
// comparing columns (user.EmailEQ compares email).
type PredicateFact struct{ Columns []string }

// AFact marks PredicateFact as a fact.
func (*PredicateFact) AFact() {}

func (f *PredicateFact) String() string { return "compares(" + strings.Join(f.Columns, ",") + ")" }
