package once005

import (
	"fmt"
	"strings"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// Op is a statement a function sends, as its callers see it.
type Op struct {
	sqlfacts.Stmt
	// Its error says "no row"; its sender handles a unique violation; checks the
	// update or delete changed a row.
	ErrAbsent, HandlesDup, Claims bool
	// 1 + the index of the parameter it is sent through, and of the row inserted, or 0.
	Param, Row int
	// ORM names the library that built the statement, empty for SQL text.
	ORM string
}

// What a function's result tells its caller of a read it made.
const (
	resRead   uint8 = 1 << iota // it depends on what the read found
	resAbsent                   // an error that means "no row"
	resExists                   // a bool, true when a row exists
)

// FuncFact says what SQL a function sends for its callers: the reads whose outcome it
// returns, its inserts, updates, deletes and locks (a table it reads and writes is judged in it,
// and left out), what its results tell, whether it handles a unique violation.
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
		parts = append(parts, fmt.Sprintf("%s %s via %d", [...]string{"?", "reads", "inserts", "updates", "deletes", "locks"}[op.Kind], strings.Join(op.Tables, ","), op.Param))
	}
	return fmt.Sprintf("sql(%s) results%v dup=%v", strings.Join(parts, "; "), f.Results, f.HandlesDup)
}

// PackageFact holds the tables a package's models name with TableName, and the unique
// constraints it declares (DDL in constants, models' tags).
type PackageFact struct {
	Tables  map[string]string // model type name → table
	Uniques []sqlfacts.Unique
}

// AFact marks PackageFact as a fact.
func (*PackageFact) AFact() {}

func (f *PackageFact) String() string {
	return fmt.Sprintf("tables %v, uniques %v", f.Tables, f.Uniques)
}
