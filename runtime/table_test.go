package once_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/directive"
	once "github.com/oncekit/once/runtime"
)

// The table= forms' SQL comes from the directive package, as oncegen writes it: the unique
// index (in pg_get_indexdef's words, which PostgreSQL runs as they are) and the conflict
// clause the function's insert uses.
var (
	chargesGuard = &directive.Directive{Kind: directive.Forever, Table: "charges", Columns: []string{"order_id"}}
	runsGuard    = &directive.Directive{Kind: directive.Open, Table: "runs", Columns: []string{"org_id"}, Status: "status", OpenValues: []string{"queued", "running"}}
	quotaGuard   = &directive.Directive{Kind: directive.Statement, Table: "quota", Columns: []string{"provider", "day"}, Counter: "used", Cap: directive.IntOrExpr{IsLit: true, Lit: 3}}
	alertsGuard  = &directive.Directive{Kind: directive.Episode, Table: "alerts", Columns: []string{"source"}, Latch: "notified_at"}
)

// setupTables is setup with the tables the table= tests insert into; index says whether each
// gets its guard's unique index and the statement form its cap check (the negative controls
// leave them out).
func setupTables(t *testing.T, conns int, index bool) *pgxpool.Pool {
	t.Helper()
	pool := setup(t, conns)
	stmts := []string{
		`CREATE TABLE charges (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, order_id text NOT NULL, caller int NOT NULL)`,
		`CREATE TABLE runs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, org_id bigint NOT NULL, status text NOT NULL DEFAULT 'queued')`,
		`CREATE TABLE quota (provider text NOT NULL, day date NOT NULL, used int NOT NULL CHECK (used >= 0))`,
		`CREATE TABLE alerts (source text NOT NULL, notified_at timestamptz)`,
	}
	if index {
		for _, d := range []*directive.Directive{chargesGuard, runsGuard, quotaGuard, alertsGuard} {
			stmts = append(stmts, d.IndexDef())
		}
		stmts = append(stmts, "ALTER TABLE quota ADD CONSTRAINT "+quotaGuard.CapName()+" "+quotaGuard.CapDef())
	}
	for _, s := range stmts {
		if _, err := pool.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return pool
}

func count(t *testing.T, db once.DB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// chargeOrder is a forever table= function: it records the effect, then inserts the charge; the
// insert is the check, so a duplicate's effect is rolled back with it.
func chargeOrder(order string, caller int) func(context.Context, pgx.Tx) (int64, error) {
	return func(ctx context.Context, tx pgx.Tx) (int64, error) {
		if err := effect(ctx, tx, "charge", order, caller); err != nil {
			return 0, err
		}
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO charges (order_id, caller) VALUES ($1, $2) `+chargesGuard.ConflictClause()+` RETURNING id`, order, caller).Scan(&id)
		return id, once.InsertConflict(err)
	}
}

func TestTable_Forever_ConcurrentInsertsRunOnce(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, stormConns, true)
	g := once.Table{Name: "billing.Charge", OnConflict: once.Duplicate}
	var ran, dup atomic.Int64
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		id, out, err := tableValue(ctx, g, conn, chargeOrder("order-1", caller))
		switch {
		case err != nil:
		case out.Status == once.Ran && id > 0:
			ran.Add(1)
		case out.Status == once.Duplicate && id == 0:
			dup.Add(1)
		default:
			t.Errorf("caller %d: id %d, outcome %+v", caller, id, out)
		}
		return err
	})
	if ran.Load() != 1 || dup.Load() != stormSize-1 {
		t.Errorf("%d ran and %d duplicates of %d callers, want 1 and %d", ran.Load(), dup.Load(), stormSize, stormSize-1)
	}
	if n := count(t, pool, "SELECT count(*) FROM charges WHERE order_id = 'order-1'"); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
	if n := effects(t, pool, "charge", "order-1"); n != 1 {
		t.Errorf("%d effects lasted, want 1: a duplicate's work before its insert must be rolled back", n)
	}
}

// The negative control: the same storms on tables without their unique indexes let every
// caller's insert through, for each form, so the index is what keeps each to one row.
func TestTable_WithoutTheIndexEveryCallerInserts(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, stormConns, false)
	inserts := map[string]string{
		"charges": `INSERT INTO charges (order_id, caller) VALUES ('order-1', $1)`,
		"runs":    `INSERT INTO runs (org_id) VALUES (7 + 0 * $1::int)`,
		"quota":   `INSERT INTO quota (provider, day, used) VALUES ('serp', '2025-01-01', 1 + 0 * $1::int)`,
		"alerts":  `INSERT INTO alerts (source, notified_at) VALUES ('db', clock_timestamp() + 0 * $1::int * interval '1 second')`,
	}
	g := once.Table{Name: "control", OnConflict: once.Duplicate}
	for table, insert := range inserts {
		storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
			// Without the index there is nothing to conflict with, and an ON CONFLICT naming
			// its columns would fail (42P10): the insert is plain.
			_, _, err := tableValue(ctx, g, conn, func(ctx context.Context, tx pgx.Tx) (struct{}, error) {
				err := tx.QueryRow(ctx, insert+` RETURNING 1`, caller).Scan(new(int))
				return struct{}{}, once.InsertConflict(err)
			})
			return err
		})
		if n := count(t, pool, "SELECT count(*) FROM "+table); n != stormSize {
			t.Errorf("%s: %d rows without the index, want %d", table, n, stormSize)
		}
	}
}

// A SELECT finding nothing is not a conflict: before the fix a lookup's pgx.ErrNoRows read
// as a duplicate, and the caller was told the work was done when it never ran.
func TestTable_ASelectFindingNothingIsAnErrorNotADuplicate(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, 4, true)
	g := once.Table{Name: "billing.Charge", OnConflict: once.Duplicate}
	ctx := context.Background()
	id, out, err := tableValue(ctx, g, pool, func(ctx context.Context, tx pgx.Tx) (int64, error) {
		if _, err := chargeOrder("order-1", 1)(ctx, tx); err != nil {
			return 0, err
		}
		var price int64 // the order's price, looked up after the insert: there is none
		err := tx.QueryRow(ctx, `SELECT caller FROM charges WHERE order_id = 'no such order'`).Scan(&price)
		return price, err
	})
	if !errors.Is(err, pgx.ErrNoRows) || errors.Is(err, once.ErrConflict) {
		t.Fatalf("err %v, want pgx.ErrNoRows, not a conflict", err)
	}
	if out.Status != 0 || id != 0 {
		t.Errorf("outcome %+v, id %d: a failed call has neither", out, id)
	}
	if n := count(t, pool, "SELECT count(*) FROM charges"); n != 0 {
		t.Errorf("%d charges lasted from a failed call, want 0", n)
	}
	if n := effects(t, pool, "charge", "order-1"); n != 0 {
		t.Errorf("%d effects lasted from a failed call, want 0", n)
	}
}

// A function error rolls back what the function did and comes back as it is; success
// commits.
func TestTable_FunctionErrorRollsBackSuccessCommits(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, 4, true)
	g := once.Table{Name: "billing.Charge", OnConflict: once.Duplicate}
	ctx := context.Background()
	boom := errors.New("card declined")
	_, out, err := tableValue(ctx, g, pool, func(ctx context.Context, tx pgx.Tx) (int64, error) {
		if _, err := chargeOrder("order-1", 1)(ctx, tx); err != nil {
			return 0, err
		}
		return 0, boom
	})
	if !errors.Is(err, boom) || out.Status != 0 {
		t.Fatalf("err %v, outcome %+v: want the function's error", err, out)
	}
	if n := count(t, pool, "SELECT count(*) FROM charges"); n != 0 {
		t.Fatalf("%d charges after a failed call, want 0", n)
	}
	id, out, err := tableValue(ctx, g, pool, chargeOrder("order-1", 2))
	if err != nil || out.Status != once.Ran || id == 0 {
		t.Fatalf("retry: id %d, outcome %+v, err %v", id, out, err)
	}
	if n := count(t, pool, "SELECT count(*) FROM charges WHERE caller = 2"); n != 1 {
		t.Errorf("%d charges by the retry, want 1", n)
	}
}

// startRun is the open form's function: on a conflict it names the open row, so the caller
// can redirect to the run in flight.
func startRun(org int64) func(context.Context, pgx.Tx) (int64, error) {
	return func(ctx context.Context, tx pgx.Tx) (int64, error) {
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO runs (org_id) VALUES ($1) `+runsGuard.ConflictClause()+` RETURNING id`, org).Scan(&id)
		if !errors.Is(err, pgx.ErrNoRows) {
			return id, err
		}
		var open int64
		if err := tx.QueryRow(ctx, `SELECT id FROM runs WHERE org_id = $1 AND status IN ('queued', 'running')`, org).Scan(&open); err != nil {
			return 0, err
		}
		return 0, once.Conflict(strconv.FormatInt(open, 10))
	}
}

func TestTable_Open_DuplicatesGetTheOpenRowsHandle(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, stormConns, true)
	g := once.Table{Name: "ideas.StartRun", OnConflict: once.InFlight}
	var winner atomic.Int64
	handles := make([]string, stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		id, out, err := tableValue(ctx, g, conn, startRun(7))
		switch {
		case err != nil:
		case out.Status == once.Ran:
			winner.Store(id)
		case out.Status == once.InFlight:
			handles[caller] = out.Holder
		default:
			t.Errorf("caller %d: outcome %+v", caller, out)
		}
		return err
	})
	if n := count(t, pool, "SELECT count(*) FROM runs WHERE org_id = 7"); n != 1 {
		t.Fatalf("%d runs started, want 1", n)
	}
	want := strconv.FormatInt(winner.Load(), 10)
	redirected := 0
	for i, h := range handles {
		if h == "" {
			continue
		}
		redirected++
		if h != want {
			t.Errorf("caller %d was sent to run %s, want the open run %s", i, h, want)
		}
	}
	if redirected != stormSize-1 {
		t.Errorf("%d callers redirected, want %d", redirected, stormSize-1)
	}

	// Once the run is done, the organisation can start another.
	if _, err := pool.Exec(context.Background(), "UPDATE runs SET status = 'done'"); err != nil {
		t.Fatal(err)
	}
	id, out, err := tableValue(context.Background(), g, pool, startRun(7))
	if err != nil || out.Status != once.Ran || strconv.FormatInt(id, 10) == want {
		t.Errorf("after the run finished: id %d, outcome %+v, err %v: want a new run", id, out, err)
	}
}

// The statement form: each caller reserves a unit of the day's quota; past the cap the
// insert's conflict clause lets no row through, and the caller is refused.
func TestTable_Statement_CapHoldsUnderAStorm(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, stormConns, true)
	g := once.Table{Name: "sources.Fetch", OnConflict: once.Refused}
	var ran, refused atomic.Int64
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		_, out, err := tableValue(ctx, g, conn, useQuota(1, caller))
		switch out.Status {
		case once.Ran:
			ran.Add(1)
		case once.Refused:
			refused.Add(1)
		}
		return err
	})
	if ran.Load() != 3 || refused.Load() != stormSize-3 {
		t.Errorf("%d ran, %d refused, want 3 and %d", ran.Load(), refused.Load(), stormSize-3)
	}
	if n := count(t, pool, "SELECT used FROM quota"); n != 3 {
		t.Errorf("counter at %d, want the cap, 3", n)
	}
	if n := effects(t, pool, "fetch", "serp"); n != 3 {
		t.Errorf("%d fetches lasted, want 3", n)
	}
}

// useQuota is the statement form's function: it records the effect, then inserts n units of
// the day's quota, the insert being the check.
func useQuota(n, caller int) func(context.Context, pgx.Tx) (int32, error) {
	return func(ctx context.Context, tx pgx.Tx) (int32, error) {
		if err := effect(ctx, tx, "fetch", "serp", caller); err != nil {
			return 0, err
		}
		var used int32
		err := tx.QueryRow(ctx, `INSERT INTO quota (provider, day, used) VALUES ('serp', '2025-01-01', $1) `+quotaGuard.ConflictClause()+` RETURNING used`, n).Scan(&used)
		return used, once.InsertConflict(err)
	}
}

// A key's first insert meets no conflict, so the conflict clause never compares it with the
// cap: the cap check does, and the guard reports its violation as a refusal, with nothing
// written. The negative control: without CapCheck, the same violation is an error, and
// without the constraint, the insert of more than the cap lasts.
func TestTable_Statement_FirstInsertOverTheCapIsRefused(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, 4, true)
	ctx := context.Background()
	g := once.Table{Name: "sources.Fetch", OnConflict: once.Refused, CapCheck: quotaGuard.CapName()}
	used, out, err := tableValue(ctx, g, pool, useQuota(4, 1))
	if err != nil || out.Status != once.Refused || used != 0 {
		t.Fatalf("first insert of 4 units against a cap of 3: used %d, outcome %+v, err %v: want refused", used, out, err)
	}
	if n := count(t, pool, "SELECT count(*) FROM quota"); n != 0 {
		t.Fatalf("%d quota rows after the refusal, want 0", n)
	}
	if n := effects(t, pool, "fetch", "serp"); n != 0 {
		t.Fatalf("%d effects lasted from the refused call, want 0", n)
	}
	if used, out, err := tableValue(ctx, g, pool, useQuota(3, 2)); err != nil || out.Status != once.Ran || used != 3 {
		t.Fatalf("first insert of the whole cap: used %d, outcome %+v, err %v: want ran, 3", used, out, err)
	}

	// Inside the caller's transaction the refusal rolls back to the guard's savepoint: the
	// caller's transaction goes on.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "DELETE FROM quota"); err != nil {
		t.Fatal(err)
	}
	if _, out, err := tableValue(ctx, g, tx, useQuota(5, 3)); err != nil || out.Status != once.Refused {
		t.Fatalf("in a transaction: outcome %+v, err %v: want refused", out, err)
	}
	if n := count(t, tx, "SELECT count(*) FROM quota"); n != 0 {
		t.Fatalf("%d quota rows in the caller's transaction after the refusal, want 0", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// Without CapCheck, the guard cannot tell the violation from any error.
	bare := once.Table{Name: "sources.Fetch", OnConflict: once.Refused}
	if _, out, err := tableValue(ctx, bare, pool, useQuota(4, 4)); err == nil || out.Status != 0 {
		t.Errorf("without CapCheck: outcome %+v, err %v: want the check's violation as an error", out, err)
	}
	// Without the constraint, the conflict clause alone lets the first insert pass the cap.
	if _, err := pool.Exec(ctx, "DELETE FROM quota; ALTER TABLE quota DROP CONSTRAINT "+quotaGuard.CapName()); err != nil {
		t.Fatal(err)
	}
	if _, out, err := tableValue(ctx, g, pool, useQuota(4, 5)); err != nil || out.Status != once.Ran {
		t.Fatalf("without the constraint: outcome %+v, err %v", out, err)
	}
	if n := count(t, pool, "SELECT sum(used) FROM quota"); n != 4 {
		t.Errorf("without the constraint, %d units lasted, want the 4 inserted over the cap of 3", n)
	}
}

// The episode form: the latch fires once; after the application clears it (its rearm), the
// next call fires again.
func TestTable_Episode_FiresOnceUntilRearmed(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, stormConns, true)
	g := once.Table{Name: "alerts.Notify", OnConflict: once.Duplicate}
	notify := func(caller int) func(context.Context, pgx.Tx) (struct{}, error) {
		return func(ctx context.Context, tx pgx.Tx) (struct{}, error) {
			if err := effect(ctx, tx, "notify", "db", caller); err != nil {
				return struct{}{}, err
			}
			err := tx.QueryRow(ctx, `INSERT INTO alerts (source, notified_at) VALUES ('db', clock_timestamp()) `+alertsGuard.ConflictClause()+` RETURNING source`).Scan(new(string))
			return struct{}{}, once.InsertConflict(err)
		}
	}
	var ran atomic.Int64
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		_, out, err := tableValue(ctx, g, conn, notify(caller))
		if out.Status == once.Ran {
			ran.Add(1)
		}
		return err
	})
	if ran.Load() != 1 || effects(t, pool, "notify", "db") != 1 {
		t.Fatalf("%d ran, %d notifications, want 1 and 1", ran.Load(), effects(t, pool, "notify", "db"))
	}
	if _, err := pool.Exec(context.Background(), "UPDATE alerts SET notified_at = NULL WHERE source = 'db'"); err != nil {
		t.Fatal(err)
	}
	if _, out, err := tableValue(context.Background(), g, pool, notify(100)); err != nil || out.Status != once.Ran {
		t.Fatalf("after rearming: outcome %+v, err %v", out, err)
	}
	if _, out, err := tableValue(context.Background(), g, pool, notify(101)); err != nil || out.Status != once.Duplicate {
		t.Fatalf("fired again: outcome %+v, err %v", out, err)
	}
	if n := effects(t, pool, "notify", "db"); n != 2 {
		t.Errorf("%d notifications, want 2: one per episode", n)
	}
}

// Inside the caller's transaction the guard's work is a savepoint: it lasts only if the
// caller commits.
func TestTable_InTheCallersTransactionTheRowLastsOnlyIfItCommits(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, 4, true)
	g := once.Table{Name: "billing.Charge", OnConflict: once.Duplicate}
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, out, err := tableValue(ctx, g, tx, chargeOrder("order-1", 1)); err != nil || out.Status != once.Ran {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	if _, out, err := tableValue(ctx, g, tx, chargeOrder("order-1", 2)); err != nil || out.Status != once.Duplicate {
		t.Fatalf("second call in the transaction: outcome %+v, err %v", out, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT count(*) FROM charges"); n != 0 {
		t.Errorf("%d charges after the caller rolled back, want 0", n)
	}
	if _, out, err := tableValue(ctx, g, pool, chargeOrder("order-1", 3)); err != nil || out.Status != once.Ran {
		t.Errorf("after the rollback: outcome %+v, err %v", out, err)
	}
}

func TestTable_InvalidGuardsWriteNothing(t *testing.T) {
	t.Parallel()
	pool := setupTables(t, 4, true)
	ctx := context.Background()
	for name, g := range map[string]once.Table{
		"no name":        {OnConflict: once.Duplicate},
		"no status":      {Name: "billing.Charge"},
		"status busy":    {Name: "billing.Charge", OnConflict: once.Busy},
		"status not set": {Name: "billing.Charge", OnConflict: 0},
	} {
		if _, _, err := tableValue(ctx, g, pool, chargeOrder("order-1", 1)); !errors.Is(err, once.ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
	g := once.Table{Name: "billing.Charge", OnConflict: once.Duplicate}
	if _, err := g.Do(ctx, pool, nil); !errors.Is(err, once.ErrInvalid) {
		t.Errorf("nil function: err %v, want ErrInvalid", err)
	}
	if _, _, err := tableValue(ctx, g, nil, chargeOrder("order-1", 1)); !errors.Is(err, once.ErrInvalid) {
		t.Errorf("nil DB: err %v, want ErrInvalid", err)
	}
	if n := count(t, pool, "SELECT count(*) FROM charges"); n != 0 {
		t.Errorf("%d charges from invalid calls, want 0", n)
	}
}

func TestConflict_IsErrConflictAndNamesTheRow(t *testing.T) {
	t.Parallel()
	err := once.Conflict("42")
	var ce *once.ConflictError
	if !errors.Is(err, once.ErrConflict) || !errors.As(err, &ce) || ce.Handle != "42" {
		t.Errorf("Conflict(42) = %v", err)
	}
	if got := once.InsertConflict(pgx.ErrNoRows); got != once.ErrConflict {
		t.Errorf("InsertConflict(ErrNoRows) = %v", got)
	}
	other := errors.New("connection reset")
	if got := once.InsertConflict(other); got != other || once.InsertConflict(nil) != nil {
		t.Errorf("InsertConflict changed another error or nil")
	}
}
