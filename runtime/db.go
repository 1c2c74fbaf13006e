package once

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB is the part of pgx that once uses. *pgxpool.Pool, *pgx.Conn and pgx.Tx all satisfy it,
// so a guard can run on a pool, on one connection, or inside a transaction the caller already
// holds (where its claim commits or rolls back with the caller's work). An app on
// database/sql with pgx's stdlib driver passes SQLDB(its *sql.DB).
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
