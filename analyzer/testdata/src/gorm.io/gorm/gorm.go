// Package gorm is a stub of gorm's query builder.
package gorm

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm/clause"
)

var (
	ErrRecordNotFound = errors.New("record not found")
	ErrDuplicatedKey  = errors.New("duplicated key not allowed")
)

// Model is the base a model embeds: a primary key the database numbers, and timestamps.
type Model struct {
	ID        uint `gorm:"primarykey"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DB is gorm's chainable handle.
type DB struct {
	Error        error
	RowsAffected int64
}

func (db *DB) WithContext(ctx context.Context) *DB      { return db }
func (db *DB) Where(query any, args ...any) *DB         { return db }
func (db *DB) Model(value any) *DB                      { return db }
func (db *DB) Table(name string, args ...any) *DB       { return db }
func (db *DB) Clauses(conds ...clause.Expression) *DB   { return db }
func (db *DB) Set(key string, value any) *DB            { return db }
func (db *DB) First(dest any, conds ...any) *DB         { return db }
func (db *DB) Take(dest any, conds ...any) *DB          { return db }
func (db *DB) Last(dest any, conds ...any) *DB          { return db }
func (db *DB) Find(dest any, conds ...any) *DB          { return db }
func (db *DB) Count(count *int64) *DB                   { return db }
func (db *DB) Scan(dest any) *DB                        { return db }
func (db *DB) Create(value any) *DB                     { return db }
func (db *DB) Save(value any) *DB                       { return db }
func (db *DB) FirstOrCreate(dest any, conds ...any) *DB { return db }
func (db *DB) Raw(sql string, values ...any) *DB        { return db }
func (db *DB) Exec(sql string, values ...any) *DB       { return db }
func (db *DB) Update(column string, value any) *DB      { return db }
func (db *DB) Updates(values any) *DB                   { return db }
func (db *DB) Delete(value any, conds ...any) *DB       { return db }
func (db *DB) Transaction(fc func(tx *DB) error) error  { return fc(db) }
