// Package pgconn is a stub of pgx v5's pgconn.
package pgconn

type CommandTag struct{ s string }

func (ct CommandTag) RowsAffected() int64 { return 0 }

// PgError is an error reported by the PostgreSQL server.
type PgError struct {
	Code           string
	Message        string
	ConstraintName string
}

func (pe *PgError) Error() string { return pe.Message + " (SQLSTATE " + pe.Code + ")" }
