package once_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

// effectsDDL is the table the tests' fake effects write to: one row per time a guarded
// function really did its work. Counting its rows is counting lasting effects.
const effectsDDL = `CREATE TABLE effects (
	id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	guard  text NOT NULL,
	key    text NOT NULL,
	caller int  NOT NULL
)`

// stormSlots bounds how many tests hold a storm-sized pool at once: the tests run several at
// a time (see TestMain), against one server's max_connections.
var stormSlots = make(chan struct{}, 3)

// setup gives a test its own database, with once's schema and the effects table, and a pool
// of up to conns connections.
func setup(t testing.TB, conns int) *pgxpool.Pool {
	t.Helper()
	if conns >= stormSize {
		stormSlots <- struct{}{}
		t.Cleanup(func() { <-stormSlots }) // registered first, so it runs after the pool closes
	}
	pool := pgtest.NewDatabase(t).Pool(t, conns)
	prepare(t, pool)
	return pool
}

func prepare(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, effectsDDL+";"+countersDDL); err != nil {
		t.Fatal(err)
	}
}

// countersDDL is the naive counter the statement tests' negative controls use: one row per
// key, read then written, as code without the guard would keep it.
const countersDDL = `CREATE TABLE counters (
	name       text        NOT NULL,
	key        text        NOT NULL,
	used       bigint      NOT NULL CHECK (used >= 0),
	cap        bigint      NOT NULL CHECK (cap >= 0),
	updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (name, key)
)`

// effect is the fake side effect: it records that caller did the work of guard for key.
func effect(ctx context.Context, db once.DB, guard, key string, caller int) error {
	_, err := db.Exec(ctx, "INSERT INTO effects (guard, key, caller) VALUES ($1, $2, $3)", guard, key, caller)
	return err
}

// effects counts the lasting effects of guard on key.
func effects(t testing.TB, db once.DB, guard, key string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT count(*) FROM effects WHERE guard = $1 AND key = $2", guard, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// onceRows counts every row in once's own tables: "nothing written" is zero.
func onceRows(t testing.TB, db once.DB) int {
	t.Helper()
	var n int
	err := db.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM once.counter_slots) + (SELECT count(*) FROM once.latches) +
		(SELECT count(*) FROM once.open_claims) + (SELECT count(*) FROM once.leases)`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// statementCounter is a pgx QueryTracer that counts the statements sent (every Exec, Query
// and QueryRow, including BEGIN and COMMIT) and keeps their text.
type statementCounter struct {
	n    atomic.Int64
	mu   sync.Mutex
	sqls []string
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	c.mu.Lock()
	c.sqls = append(c.sqls, strings.Join(strings.Fields(data.SQL), " "))
	c.mu.Unlock()
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// reset starts counting again and returns the statements counted so far.
func (c *statementCounter) reset() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sqls
	c.sqls = nil
	c.n.Store(0)
	return s
}

// setupCounted is setup with a pool whose statements are counted.
func setupCounted(t testing.TB) (*pgxpool.Pool, *statementCounter) {
	t.Helper()
	counter := &statementCounter{}
	pool := setupTracer(t, counter, 4)
	counter.reset()
	return pool, counter
}

// onStatement is a tracer that calls seen with the arguments of each statement sql sent.
type onStatement struct {
	sql  string
	seen func(args []any)
}

func (o onStatement) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if d.SQL == o.sql {
		o.seen(d.Args)
	}
	return ctx
}
func (o onStatement) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// setupTracer is setup with a pool of conns connections whose statements go through
// tracer, which sees the schema's statements too.
func setupTracer(t testing.TB, tracer pgx.QueryTracer, conns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	cfg.MaxConns = conns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	prepare(t, pool)
	return pool
}

// exec runs sql on db, failing the test on an error.
func exec(t testing.TB, db once.DB, sql string) {
	t.Helper()
	if _, err := db.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
