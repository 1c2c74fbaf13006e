// Package repo holds helpers whose facts their callers read. // want package:`tables map\[User:app_users\], uniques \[\{app_users \[email\] false false\} \{app_users \[id\] true true\}\]`
//
// What each sends, through which parameter, and what its results tell.
package repo

import (
	"context"
	"database/sql"
	"errors"
)

// User names its table by a method; its email is unique by the schema in its DDL
// constant.
type User struct {
	ID    int64
	Email string
}

func (User) TableName() string { return "app_users" }

// Schema is executed at start-up.
const Schema = `CREATE TABLE IF NOT EXISTS app_users (id bigserial PRIMARY KEY, email text NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS app_users_email ON app_users (email);`

// ByEmail returns the user, or sql.ErrNoRows: its error says "no row".
func ByEmail(ctx context.Context, db *sql.DB, email string) (User, error) { // want ByEmail:`sql\(reads app_users via 2\) results\[1 3\] dup=false`
	var u User
	err := db.QueryRowContext(ctx, `SELECT id, email FROM app_users WHERE email = $1`, email).Scan(&u.ID, &u.Email)
	return u, err
}

// Exists answers whether the user is there.
func Exists(ctx context.Context, db *sql.DB, email string) (bool, error) { // want Exists:`sql\(reads app_users via 2\) results\[5 1\] dup=false`
	var ok bool
	err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM app_users WHERE email = $1)`, email).Scan(&ok)
	return ok, err
}

// Find tells "no row" apart itself: its error means a failure only.
func Find(ctx context.Context, db *sql.DB, email string) (*User, error) { // want Find:`sql\(reads app_users via 2\) results\[1 1\] dup=false`
	var u User
	err := db.QueryRowContext(ctx, `SELECT id FROM app_users WHERE email = $1`, email).Scan(&u.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &u, err
}

// Insert inserts through the transaction it is given, its second parameter.
func Insert(ctx context.Context, tx *sql.Tx, email string) error { // want Insert:`sql\(inserts app_users via 2\) results\[0\] dup=false`
	_, err := tx.ExecContext(ctx, `INSERT INTO app_users (email) VALUES ($1)`, email)
	return err
}

// Lock holds a lock until the transaction ends.
func Lock(ctx context.Context, tx *sql.Tx, key int64) error { // want Lock:`sql\(locks  via 2\) results\[0\] dup=false`
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, key)
	return err
}

// Log reads nothing it returns: nothing for its callers.
func Log(ctx context.Context, db *sql.DB, email string) {
	var n int
	_ = db.QueryRowContext(ctx, `SELECT count(*) FROM app_users WHERE email = $1`, email).Scan(&n)
}

// IsDuplicate names the unique violation.
func IsDuplicate(err error) bool { // want IsDuplicate:`sql\(\) results\[0\] dup=true`
	return err != nil && err.Error() == "23505"
}

// InsertTwice inserts through Insert at two calls: one statement to its callers.
func InsertTwice(ctx context.Context, tx *sql.Tx, a, b string) error { // want InsertTwice:`^sql\(inserts app_users via 2\) results\[0\] dup=false$`
	if err := Insert(ctx, tx, a); err != nil {
		return err
	}
	return Insert(ctx, tx, b)
}

// Inserter inserts users through the handle it is given.
type Inserter interface {
	Insert(ctx context.Context, db *sql.DB, email string) error
}

type sqlInserter struct{}

func (sqlInserter) Insert(ctx context.Context, db *sql.DB, email string) error { // want Insert:`sql\(inserts app_users via 3\) results\[0\] dup=false`
	_, err := db.ExecContext(ctx, `INSERT INTO app_users (email) VALUES ($1)`, email)
	return err
}

// InsertThrough inserts through the interface: the implementation's handle, its third
// parameter counting the receiver, is InsertThrough's second.
func InsertThrough(ctx context.Context, db *sql.DB, ins Inserter, email string) error { // want InsertThrough:`sql\(inserts app_users via 2\) results\[0\] dup=false`
	return ins.Insert(ctx, db, email)
}
