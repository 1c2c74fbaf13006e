package once_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
)

// pooled opens a pool of conns connections through PgBouncer in transaction mode, with pgx
// asked for mode ("" for pgx's default, cache_statement), on a database migrated straight
// on the server.
func pooled(t *testing.T, mode string, conns int) *pgxpool.Pool {
	t.Helper()
	db := pgtest.NewPooledDatabase(t, mode)
	direct, err := pgxpool.New(context.Background(), db.DirectURL)
	if err != nil {
		t.Fatal(err)
	}
	prepare(t, direct)
	direct.Close()
	return db.Pool(t, conns)
}

// Through PgBouncer in transaction mode, a pool left at pgx's default exec mode is refused by
// Verify at start-up with an error that says what to set; the negative control shows what it
// prevents: the same pool's guards fail (their prepared statements do not follow them from
// one server session to the next), the settle after an effect among them. In the exec modes
// the pooler allows, Verify passes and a storm keeps its promise through the pooler.
func TestVerify_RefusesAPoolWhosePreparedStatementsCannotCrossATransactionPooler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []string{"", "cache_statement", "describe_exec"} {
		t.Run("mode="+mode, func(t *testing.T) {
			pool := pooled(t, mode, 4)
			err := once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...)
			if !errors.Is(err, once.ErrPoolMode) || !strings.Contains(err.Error(), "default_query_exec_mode=exec") {
				t.Fatalf("Verify through PgBouncer with mode %q: %v; want ErrPoolMode saying what to set", mode, err)
			}
		})
	}

	t.Run("negative control: the guards Verify refused fail", func(t *testing.T) {
		pool := pooled(t, "", stormConns)
		g := once.Forever[int]{Name: "pooler.Default"}
		var failed int
		// Unlike storm (which fails the test on any error), count the errors.
		errs := make(chan error, stormSize)
		for i := range stormSize {
			go func() {
				_, _, err := g.Do(ctx, pool, fmt.Sprintf("k%d", i%8), func(context.Context) (int, error) { return i, nil })
				errs <- err
			}()
		}
		for range stormSize {
			if err := <-errs; err != nil {
				failed++
			}
		}
		if failed == 0 {
			t.Fatalf("with pgx's default mode through PgBouncer every guard call succeeded: the check above guards nothing")
		}
		t.Logf("%d of %d calls failed with pgx's default mode through PgBouncer", failed, stormSize)
	})

	for _, mode := range []string{"exec", "simple_protocol", "cache_describe"} {
		t.Run("mode="+mode, func(t *testing.T) {
			pool := pooled(t, mode, stormConns)
			if err := once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...); err != nil {
				t.Fatalf("Verify through PgBouncer with mode %s: %v", mode, err)
			}
			g := once.Forever[int]{Name: "pooler." + mode}
			storm(t, pool, stormSize, func(ctx context.Context, caller int, c *pgxpool.Conn) error {
				_, _, err := g.Do(ctx, c, "k", func(ctx context.Context) (int, error) {
					_, err := c.Exec(ctx, "INSERT INTO effects (guard, key, caller) VALUES ($1, 'k', $2)", g.Name, caller)
					return caller, err
				})
				if errors.Is(err, once.ErrInFlight) {
					return nil
				}
				return err
			})
			var effects int
			if err := pool.QueryRow(ctx, "SELECT count(*) FROM effects").Scan(&effects); err != nil {
				t.Fatal(err)
			}
			if effects != 1 {
				t.Fatalf("%d effects through PgBouncer (%s), want 1", effects, mode)
			}
		})
	}
}

// Straight to PostgreSQL, pgx's default mode is what Verify wants: the check finds no
// pooler and says nothing.
func TestVerify_APoolStraightToTheServerPassesThePoolerCheck(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	if err := once.VerifyRequirements(context.Background(), pool, once.SchemaRequirements()...); err != nil {
		t.Fatal(err)
	}
}

// A server that accepts advisory-lock calls and locks nothing (CockroachDB says so in its
// crdb_version parameter) is refused by a transaction guard; the other kinds rest on unique
// indexes and conditional writes, which it keeps.
func TestServerRefusal_TransactionOnCockroachDB(t *testing.T) {
	t.Parallel()
	crdb := func(name string) string {
		if name == "crdb_version" {
			return "CockroachDB CCL v23.2.4 (x86_64-pc-linux-gnu)"
		}
		return ""
	}
	postgres := func(string) string { return "" }
	if err := once.ServerRefusal("transaction", "billing.Limit", crdb); !errors.Is(err, once.ErrUnsupportedServer) ||
		!strings.Contains(err.Error(), "CockroachDB CCL v23.2.4") || !strings.Contains(err.Error(), "billing.Limit") {
		t.Fatalf("transaction on CockroachDB: %v; want ErrUnsupportedServer naming the server and the guard", err)
	}
	for _, kind := range []string{"forever", "open", "statement", "episode", "lease"} {
		if err := once.ServerRefusal(kind, "g", crdb); err != nil {
			t.Errorf("%s on CockroachDB: %v; want no refusal", kind, err)
		}
	}
	if err := once.ServerRefusal("transaction", "g", postgres); err != nil {
		t.Errorf("transaction on PostgreSQL: %v", err)
	}
}

// A server with no standby has nothing a promotion could lose: no warning. (The standby
// cases are checked on the failover tests' pairs, before their storms.)
func TestVerifyWarnings_NoStandbyNoWarning(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	warnings, err := once.VerifyWarnings(context.Background(), pool)
	if errors.Is(err, once.ErrSchema) {
		err = nil // requirements other tests of this binary registered: only the warnings count
	}
	if err != nil || len(warnings) != 0 {
		t.Fatalf("VerifyWarnings without a standby: %v, %v; want none", warnings, err)
	}
}
