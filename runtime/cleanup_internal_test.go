package once

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// The clean-up's connect tries again on a connection fault or a busy server, and stops at
// once on what no retry cures: a wrong password, a closed pool, a closed *sql.DB.
func TestRetryConnect_TriesAgainOnlyWhereItCanHelp(t *testing.T) {
	closed, err := sql.Open("pgx", "postgres://localhost/unused")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	_, _, closedErr := (&sqlDB{db: closed}).acquire(context.Background())
	for _, tc := range []struct {
		name  string
		err   error
		again bool
	}{
		{"bad connection", driver.ErrBadConn, true},
		{"connection fault", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", fmt.Errorf("connect: %w", &pgconn.PgError{Code: "53300"}), true},
		{"wrong password", &pgconn.PgError{Code: "28P01"}, false},
		{"closed pool", puddle.ErrClosedPool, false},
		{"closed *sql.DB", closedErr, false},
		{"invalid DB", fmt.Errorf("%w: nil pool", ErrInvalid), false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		calls := 0
		_, err := retryConnect(ctx, func(context.Context) (int, error) { calls++; return 0, tc.err })
		cancel()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if again := calls > 1; again != tc.again {
			t.Errorf("%s (%v): %d calls, want tried again: %v", tc.name, tc.err, calls, tc.again)
		}
	}
}
