package once_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
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
			err := onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...)
			if !errors.Is(err, onceschema.ErrPoolMode) || !strings.Contains(err.Error(), "default_query_exec_mode=exec") {
				t.Fatalf("Verify through PgBouncer with mode %q: %v; want ErrPoolMode saying what to set", mode, err)
			}
		})
	}

	t.Run("negative control: the guards Verify refused fail", func(t *testing.T) {
		pool := pooled(t, "", stormConns)
		g := once.Forever{Name: "pooler.Default"}
		var failed int
		// Unlike storm (which fails the test on any error), count the errors.
		errs := make(chan error, stormSize)
		for i := range stormSize {
			go func() {
				_, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: fmt.Sprintf("k%d", i%8)}, func(context.Context) (int, error) { return i, nil })
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
			if err := onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...); err != nil {
				t.Fatalf("Verify through PgBouncer with mode %s: %v", mode, err)
			}
			g := once.Forever{Name: "pooler." + mode}
			storm(t, pool, stormSize, func(ctx context.Context, caller int, c *pgxpool.Conn) error {
				_, _, err := once.ForeverValue(ctx, c, g, once.Ref{Key: "k"}, func(ctx context.Context) (int, error) {
					_, err := c.Exec(ctx, "INSERT INTO effects (guard, key, caller) VALUES ($1, 'k', $2)", g.Name, caller)
					return caller, err
				})
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
	if err := onceschema.VerifyRequirements(context.Background(), pool, onceschema.RuntimeRequirements()...); err != nil {
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
	warnings, err := onceschema.VerifyWarnings(context.Background(), pool)
	if errors.Is(err, onceschema.ErrSchema) {
		err = nil // requirements other tests of this binary registered: only the warnings count
	}
	if err != nil || len(warnings) != 0 {
		t.Fatalf("VerifyWarnings without a standby: %v, %v; want none", warnings, err)
	}
}

// The same refusal on a real PostgreSQL that says it is CockroachDB: a proxy in front of it
// adds crdb_version to the parameters the server reports at start-up. The transaction
// guard refuses before its function runs; a forever guard, which rests on a unique index,
// runs through the same proxy; and straight to the server (the negative control) the
// transaction guard runs.
func TestServerRefusal_TransactionOnAServerReportingCockroachDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	direct, err := pgxpool.New(ctx, db.DirectURL)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	prepare(t, direct)
	crdb, err := pgxpool.New(ctx, crdbProxy(t, db.DirectURL))
	if err != nil {
		t.Fatal(err)
	}
	defer crdb.Close()

	tg := once.Transaction{Name: "crdb.Decide"}
	ran := 0
	decide := func(context.Context, pgx.Tx) (int, error) { ran++; return 1, nil }
	if _, _, err := txValue(ctx, tg, crdb, "k", decide); !errors.Is(err, once.ErrUnsupportedServer) || !strings.Contains(err.Error(), "CockroachDB") {
		t.Fatalf("a transaction guard on a server reporting CockroachDB: %v; want ErrUnsupportedServer", err)
	}
	if ran != 0 {
		t.Fatalf("the refused guard ran its function %d times", ran)
	}
	fg := once.Forever{Name: "crdb.Charge"}
	if _, out, err := once.ForeverValue(ctx, crdb, fg, once.Ref{Key: "k"}, func(context.Context) (int, error) { return 1, nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("a forever guard on a server reporting CockroachDB: %v, %v; want it to run", out.Status, err)
	}
	if _, out, err := txValue(ctx, tg, direct, "k", decide); err != nil || out.Status != once.Ran || ran != 1 {
		t.Fatalf("the transaction guard straight to PostgreSQL: %v, %v (ran %d); want it to run", out.Status, err, ran)
	}
}

// crdbProxy starts a proxy to the server of url that adds the parameter crdb_version to
// what the server reports before it is first ready for a query, and returns url through it.
func crdbProxy(t *testing.T, url string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	param := []byte("crdb_version\x00CockroachDB CCL v23.2.4 (x86_64-pc-linux-gnu)\x00")
	status := append([]byte{'S', 0, 0, 0, 0}, param...)
	binary.BigEndian.PutUint32(status[1:5], uint32(4+len(param)))
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			go func() { io.Copy(server, client); server.Close() }()
			go func() {
				defer client.Close()
				// Server messages: a type byte and a length that counts itself.
				for {
					head := make([]byte, 5)
					if _, err := io.ReadFull(server, head); err != nil {
						return
					}
					body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
					if _, err := io.ReadFull(server, body); err != nil {
						return
					}
					if head[0] == 'Z' {
						if _, err := client.Write(status); err != nil {
							return
						}
					}
					if _, err := client.Write(append(head, body...)); err != nil {
						return
					}
					if head[0] == 'Z' {
						io.Copy(client, server)
						return
					}
				}
			}()
		}
	}()
	u := strings.Replace(url, target, ln.Addr().String(), 1)
	if u == url {
		t.Fatalf("no %s in %s", target, url)
	}
	return u
}
