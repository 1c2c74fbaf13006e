// Package clause is a stub of gorm's clause package: the clauses oncelint reads.
package clause

// Expression is a clause.
type Expression interface{}

// Column names a column.
type Column struct{ Name string }

// Table names a table.
type Table struct{ Name string }

// Locking is SELECT ... FOR UPDATE / FOR SHARE.
type Locking struct {
	Strength string
	Table    Table
	Options  string
}

// OnConflict is INSERT ... ON CONFLICT.
type OnConflict struct {
	Columns   []Column
	DoNothing bool
	UpdateAll bool
}

// Insert is INSERT with a modifier (IGNORE).
type Insert struct {
	Table    Table
	Modifier string
}
