// Package gorm is a stub of gorm v1's API, enough for the cases.
package gorm

import "errors"

var ErrRecordNotFound = errors.New("record not found")

type DB struct{ Error error }

func (s *DB) Where(query any, args ...any) *DB   { return s }
func (s *DB) Model(value any) *DB                { return s }
func (s *DB) Table(name string) *DB              { return s }
func (s *DB) First(out any, where ...any) *DB    { return s }
func (s *DB) Find(out any, where ...any) *DB     { return s }
func (s *DB) Count(value any) *DB                { return s }
func (s *DB) Create(value any) *DB               { return s }
func (s *DB) Save(value any) *DB                 { return s }
func (s *DB) Exec(sql string, values ...any) *DB { return s }
func (s *DB) RecordNotFound() bool               { return false }
func IsRecordNotFoundError(err error) bool       { return errors.Is(err, ErrRecordNotFound) }
