// Package sqlx is a stub of sqlx's DB and Tx.
package sqlx

import (
	"context"
	"database/sql"
)

type DB struct{}
type Tx struct{}

func (db *DB) Get(dest any, query string, args ...any) error                             { return nil }
func (db *DB) GetContext(ctx context.Context, dest any, query string, args ...any) error { return nil }
func (db *DB) Select(dest any, query string, args ...any) error                          { return nil }
func (db *DB) Exec(query string, args ...any) (sql.Result, error)                        { return nil, nil }
func (db *DB) NamedExec(query string, arg any) (sql.Result, error)                       { return nil, nil }
func (db *DB) Beginx() (*Tx, error)                                                      { return &Tx{}, nil }
func (tx *Tx) Get(dest any, query string, args ...any) error                             { return nil }
func (tx *Tx) Exec(query string, args ...any) (sql.Result, error)                        { return nil, nil }
func (tx *Tx) NamedExec(query string, arg any) (sql.Result, error)                       { return nil, nil }
func (tx *Tx) Commit() error                                                             { return nil }
func (tx *Tx) Rollback() error                                                           { return nil }
