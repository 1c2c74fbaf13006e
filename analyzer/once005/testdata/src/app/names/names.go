// Package names shows that names decide nothing: a type of the application's own with
// methods named like an ORM's sends no SQL, and helpers named against what they do are
// judged by the SQL they send.
package names

import (
	"context"
	"database/sql"
)

// Cache has methods named like gorm's and a driver's.
type Cache struct{ m map[string]string }

func (c *Cache) First(key string) *string {
	if v, ok := c.m[key]; ok {
		return &v
	}
	return nil
}

func (c *Cache) Create(key, value string) { c.m[key] = value }

func (c *Cache) Exec(ctx context.Context, query string, args ...any) error { return nil }

// Warm checks then creates in a cache: no SQL, no finding.
func Warm(ctx context.Context, c *Cache, key string) error {
	if c.First(key) != nil {
		return nil
	}
	c.Create(key, "x")
	return c.Exec(ctx, `INSERT INTO users (email) VALUES ($1)`, key)
}

// insertUser only reads.
func insertUser(ctx context.Context, db *sql.DB, email string) (bool, error) {
	var ok bool
	err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE email = $1)`, email).Scan(&ok)
	return ok, err
}

// findUser inserts.
func findUser(ctx context.Context, db *sql.DB, email string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO users (email) VALUES ($1)`, email)
	return err
}

// SignUp is judged by what the helpers send, not by their names.
func SignUp(ctx context.Context, db *sql.DB, email string) error {
	taken, err := insertUser(ctx, db, email)
	if err != nil || taken {
		return err
	}
	return findUser(ctx, db, email) // want `insert into users by names.findUser is decided by a read of users by names.insertUser`
}
