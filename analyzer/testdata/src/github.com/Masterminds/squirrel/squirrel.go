// Package squirrel is a stub of github.com/Masterminds/squirrel: its builders and how they run.
package squirrel

import (
	"context"
	"database/sql"
)

type BaseRunner interface {
	Exec(query string, args ...interface{}) (sql.Result, error)
	Query(query string, args ...interface{}) (*sql.Rows, error)
}

type RowScanner interface{ Scan(...interface{}) error }

type Eq map[string]interface{}

type StatementBuilderType struct{}

var StatementBuilder StatementBuilderType

type PlaceholderFormat interface{}

var Dollar PlaceholderFormat

func (b StatementBuilderType) PlaceholderFormat(f PlaceholderFormat) StatementBuilderType { return b }
func (b StatementBuilderType) Select(columns ...string) SelectBuilder                     { return SelectBuilder{} }
func (b StatementBuilderType) Insert(into string) InsertBuilder                           { return InsertBuilder{} }
func (b StatementBuilderType) Update(table string) UpdateBuilder                          { return UpdateBuilder{} }
func (b StatementBuilderType) Delete(from string) DeleteBuilder                           { return DeleteBuilder{} }

func Select(columns ...string) SelectBuilder { return SelectBuilder{} }
func Insert(into string) InsertBuilder       { return InsertBuilder{} }
func Update(table string) UpdateBuilder      { return UpdateBuilder{} }
func Delete(from string) DeleteBuilder       { return DeleteBuilder{} }

type SelectBuilder struct{ m map[string]interface{} }

func (b SelectBuilder) From(from string) SelectBuilder                             { return b }
func (b SelectBuilder) Columns(columns ...string) SelectBuilder                    { return b }
func (b SelectBuilder) Where(pred interface{}, args ...interface{}) SelectBuilder  { return b }
func (b SelectBuilder) Prefix(sql string, args ...interface{}) SelectBuilder       { return b }
func (b SelectBuilder) Suffix(sql string, args ...interface{}) SelectBuilder       { return b }
func (b SelectBuilder) Limit(limit uint64) SelectBuilder                           { return b }
func (b SelectBuilder) RunWith(runner BaseRunner) SelectBuilder                    { return b }
func (b SelectBuilder) ToSql() (string, []interface{}, error)                      { return "", nil, nil }
func (b SelectBuilder) QueryRow() RowScanner                                       { return nil }
func (b SelectBuilder) QueryRowContext(ctx context.Context) RowScanner             { return nil }
func (b SelectBuilder) Scan(dest ...interface{}) error                             { return nil }
func (b SelectBuilder) ScanContext(ctx context.Context, dest ...interface{}) error { return nil }
func (b SelectBuilder) Query() (*sql.Rows, error)                                  { return nil, nil }

type InsertBuilder struct{ m map[string]interface{} }

func (b InsertBuilder) Columns(columns ...string) InsertBuilder              { return b }
func (b InsertBuilder) Values(values ...interface{}) InsertBuilder           { return b }
func (b InsertBuilder) SetMap(clauses map[string]interface{}) InsertBuilder  { return b }
func (b InsertBuilder) Suffix(sql string, args ...interface{}) InsertBuilder { return b }
func (b InsertBuilder) RunWith(runner BaseRunner) InsertBuilder              { return b }
func (b InsertBuilder) ToSql() (string, []interface{}, error)                { return "", nil, nil }
func (b InsertBuilder) Exec() (sql.Result, error)                            { return nil, nil }
func (b InsertBuilder) ExecContext(ctx context.Context) (sql.Result, error)  { return nil, nil }

type UpdateBuilder struct{ m map[string]interface{} }

func (b UpdateBuilder) Set(column string, value interface{}) UpdateBuilder        { return b }
func (b UpdateBuilder) SetMap(clauses map[string]interface{}) UpdateBuilder       { return b }
func (b UpdateBuilder) Where(pred interface{}, args ...interface{}) UpdateBuilder { return b }
func (b UpdateBuilder) RunWith(runner BaseRunner) UpdateBuilder                   { return b }
func (b UpdateBuilder) ToSql() (string, []interface{}, error)                     { return "", nil, nil }
func (b UpdateBuilder) Exec() (sql.Result, error)                                 { return nil, nil }

type DeleteBuilder struct{ m map[string]interface{} }

func (b DeleteBuilder) Where(pred interface{}, args ...interface{}) DeleteBuilder { return b }
func (b DeleteBuilder) ToSql() (string, []interface{}, error)                     { return "", nil, nil }
