// Package sqlf is a stub of github.com/leporo/sqlf: its statement builder and how it runs.
package sqlf

import (
	"context"
	"database/sql"
)

type Executor interface {
	ExecContext(ctx context.Context, query string, args ...interface{}) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...interface{}) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...interface{}) *sql.Row
}

type Stmt struct{ chunks []string }

type Dialect struct{}

var PostgreSQL = &Dialect{}

func (d *Dialect) From(expr string, args ...interface{}) *Stmt   { return &Stmt{} }
func (d *Dialect) Select(expr string, args ...interface{}) *Stmt { return &Stmt{} }
func (d *Dialect) InsertInto(tableName string) *Stmt             { return &Stmt{} }
func (d *Dialect) Update(tableName string) *Stmt                 { return &Stmt{} }

func From(expr string, args ...interface{}) *Stmt   { return &Stmt{} }
func Select(expr string, args ...interface{}) *Stmt { return &Stmt{} }
func InsertInto(tableName string) *Stmt             { return &Stmt{} }
func Update(tableName string) *Stmt                 { return &Stmt{} }
func DeleteFrom(tableName string) *Stmt             { return &Stmt{} }

func (q *Stmt) Select(expr string, args ...interface{}) *Stmt { return q }
func (q *Stmt) To(dest ...interface{}) *Stmt                  { return q }
func (q *Stmt) From(expr string, args ...interface{}) *Stmt   { return q }
func (q *Stmt) Where(expr string, args ...interface{}) *Stmt  { return q }
func (q *Stmt) Set(field string, value interface{}) *Stmt     { return q }
func (q *Stmt) Clause(expr string, args ...interface{}) *Stmt { return q }
func (q *Stmt) Returning(expr string) *Stmt                   { return q }
func (q *Stmt) String() string                                { return "" }
func (q *Stmt) Args() []interface{}                           { return nil }
func (q *Stmt) Close()                                        {}

func (q *Stmt) QueryRow(ctx context.Context, db Executor) error                   { return nil }
func (q *Stmt) QueryRowAndClose(ctx context.Context, db Executor) error           { return nil }
func (q *Stmt) Exec(ctx context.Context, db Executor) (sql.Result, error)         { return nil, nil }
func (q *Stmt) ExecAndClose(ctx context.Context, db Executor) (sql.Result, error) { return nil, nil }
