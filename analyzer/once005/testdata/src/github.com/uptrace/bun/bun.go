// Package bun is a stub of bun's query builders.
package bun

import (
	"context"
	"database/sql"
)

// BaseModel carries a model's table in its tag.
type BaseModel struct{}

type DB struct{}

type SelectQuery struct{}

type InsertQuery struct{}

func (db *DB) NewSelect() *SelectQuery { return &SelectQuery{} }
func (db *DB) NewInsert() *InsertQuery { return &InsertQuery{} }

func (q *SelectQuery) Model(model any) *SelectQuery                              { return q }
func (q *SelectQuery) Table(tables ...string) *SelectQuery                       { return q }
func (q *SelectQuery) Where(query string, args ...any) *SelectQuery              { return q }
func (q *SelectQuery) For(s string, args ...any) *SelectQuery                    { return q }
func (q *SelectQuery) Scan(ctx context.Context, dest ...any) error               { return nil }
func (q *SelectQuery) Exists(ctx context.Context) (bool, error)                  { return false, nil }
func (q *SelectQuery) Count(ctx context.Context) (int, error)                    { return 0, nil }
func (q *InsertQuery) Model(model any) *InsertQuery                              { return q }
func (q *InsertQuery) On(s string, args ...any) *InsertQuery                     { return q }
func (q *InsertQuery) Ignore() *InsertQuery                                      { return q }
func (q *InsertQuery) Exec(ctx context.Context, dest ...any) (sql.Result, error) { return nil, nil }
