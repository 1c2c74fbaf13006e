// Package sql is a stub of ent's SQL dialect: the predicate builders generated code calls.
package sql

// Selector is a SELECT being built.
type Selector struct{}

// C returns a column's qualified name.
func (s *Selector) C(column string) string { return column }

// Where adds a predicate.
func (s *Selector) Where(p *Predicate) *Selector { return s }

// Predicate is a WHERE condition.
type Predicate struct{}

// EQ compares a column with a value.
func EQ(col string, v any) *Predicate { return nil }

// FieldEQ returns a predicate comparing a field with a value.
func FieldEQ(name string, v any) func(*Selector) { return nil }

// AndPredicates joins predicates.
func AndPredicates(ps ...func(*Selector)) func(*Selector) { return nil }
