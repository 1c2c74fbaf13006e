// Package startup creates its tables from Go constants at start-up: the unique indexes
// they hold make its inserts the check, in a plain string, a constant concatenated and
// a list of migrations.
package startup

import (
	"context"
	"database/sql"
)

const handlesTable = "nicknames"

var migrations = []string{
	`CREATE TABLE IF NOT EXISTS badges (id bigserial PRIMARY KEY, user_id bigint, badge text)`,
	`CREATE UNIQUE INDEX IF NOT EXISTS badges_user_badge ON badges (user_id, badge)`,
}

// Migrate runs at start-up.
func Migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS emails (id bigserial PRIMARY KEY, address text NOT NULL UNIQUE)`); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE UNIQUE INDEX IF NOT EXISTS nick_user ON `+handlesTable+` (user_id)`); err != nil {
		return err
	}
	for _, m := range migrations {
		if _, err := db.ExecContext(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func count(ctx context.Context, db *sql.DB, q string, args ...any) int {
	var n int
	_ = db.QueryRowContext(ctx, q, args...).Scan(&n)
	return n
}

// AddEmail: address is UNIQUE in the table Migrate creates.
func AddEmail(ctx context.Context, db *sql.DB, address string) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM emails WHERE address = $1`, address).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := db.ExecContext(ctx, `INSERT INTO emails (address) VALUES ($1)`, address)
	return err
}

// SetNick: user_id is unique by the index built from a concatenated constant.
func SetNick(ctx context.Context, db *sql.DB, user int64, nick string) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM nicknames WHERE user_id = $1`, user).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := db.ExecContext(ctx, `INSERT INTO nicknames (user_id, nick) VALUES ($1, $2)`, user, nick)
	return err
}

// Award: (user_id, badge) is unique by the list of migrations.
func Award(ctx context.Context, db *sql.DB, user int64, badge string) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM badges WHERE user_id = $1 AND badge = $2`, user, badge).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := db.ExecContext(ctx, `INSERT INTO badges (user_id, badge) VALUES ($1, $2)`, user, badge)
	return err
}

// AddAlias: nothing makes aliases unique.
func AddAlias(ctx context.Context, db *sql.DB, user int64, alias string) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM aliases WHERE user_id = $1 AND alias = $2`, user, alias).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := db.ExecContext(ctx, `INSERT INTO aliases (user_id, alias) VALUES ($1, $2)`, user, alias) // want `insert into aliases is decided by a read of aliases`
	return err
}
