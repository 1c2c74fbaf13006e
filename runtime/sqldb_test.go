package once_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

// setupSQL gives a test its own database with once's schema and the effects table, and a
// *sql.DB on it through pgx's stdlib driver with up to conns connections.
func setupSQL(t *testing.T, conns int) *sql.DB {
	sqldb, _ := setupSQLDatabase(t, conns)
	return sqldb
}

// setupSQLDatabase is setupSQL that also returns the database, for a pgx pool beside it.
func setupSQLDatabase(t *testing.T, conns int) (*sql.DB, *pgtest.Database) {
	t.Helper()
	stormSlots <- struct{}{}
	t.Cleanup(func() { <-stormSlots })
	d := pgtest.NewDatabase(t)
	sqldb, err := sql.Open("pgx", d.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqldb.Close() })
	sqldb.SetMaxOpenConns(conns)
	sqldb.SetMaxIdleConns(conns)
	db := once.SQLDB(sqldb)
	if err := onceschema.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(context.Background(), effectsDDL); err != nil {
		t.Fatal(err)
	}
	return sqldb, d
}

// An app on *sql.DB runs a Forever guard's storm through SQLDB, with no pgx pool of its own:
// 64 callers of one key, one payment at the provider, one effect row, one Ran and 63
// duplicates that waited for the recorded outcome.
func TestSQLDBForeverStorm(t *testing.T) {
	t.Parallel()
	sqldb := setupSQL(t, stormConns)
	db := once.SQLDB(sqldb)
	provider := fakeprovider.New(t, fakeprovider.WithoutIdempotency(), fakeprovider.WithLatency(20*time.Millisecond))
	g := once.Forever{Name: "billing.Charge", Wait: 30 * time.Second}
	var ran, dup atomic.Int64
	together(t, stormSize, func(ctx context.Context, caller int) error {
		out, err := g.Do(ctx, db, once.Ref{Key: "order/1"}, func(ctx context.Context) error {
			if _, err := provider.Post(ctx, "/v1/charges", "", map[string]any{"order": "order/1"}); err != nil {
				return once.Terminal(err)
			}
			return effect(ctx, db, g.Name, "order/1", caller)
		})
		switch {
		case err != nil:
			return err
		case out.Status == once.Ran:
			ran.Add(1)
		case out.Status == once.Duplicate:
			dup.Add(1)
		default:
			return errors.New("unexpected status " + out.Status.String())
		}
		return nil
	})
	if got := provider.Effects(); got != 1 {
		t.Errorf("provider saw %d payments, want 1", got)
	}
	if got := effects(t, db, g.Name, "order/1"); got != 1 {
		t.Errorf("%d effect rows, want 1", got)
	}
	if ran.Load() != 1 || dup.Load() != stormSize-1 {
		t.Errorf("ran %d, duplicate %d; want 1 and %d", ran.Load(), dup.Load(), stormSize-1)
	}
	var state string
	if err := sqldb.QueryRow(`SELECT state FROM once.operations WHERE name = $1`, g.Name).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "done" {
		t.Errorf("operation state %q, want done", state)
	}
	// Every connection went back to the pool: none is held by a lease left open.
	if s := sqldb.Stats(); s.InUse != 0 {
		t.Errorf("%d connections still in use after the storm, want 0", s.InUse)
	}
}

// The negative control: the same storm through the same *sql.DB, checking for an earlier
// payment before making one, as code without the guard would. Every caller checks before any
// pays (a barrier holds the window open), and the provider is paid more than once.
func TestSQLDBStormWithoutGuardPaysTwice(t *testing.T) {
	t.Parallel()
	sqldb := setupSQL(t, stormConns)
	db := once.SQLDB(sqldb)
	provider := fakeprovider.New(t, fakeprovider.WithoutIdempotency())
	b := newBarrier(stormSize)
	together(t, stormSize, func(ctx context.Context, caller int) error {
		var n int
		if err := sqldb.QueryRowContext(ctx, `SELECT count(*) FROM effects WHERE key = 'order/1'`).Scan(&n); err != nil {
			return err
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := provider.Post(ctx, "/v1/charges", "", map[string]any{"order": "order/1"}); err != nil {
			return err
		}
		return effect(ctx, db, "unguarded", "order/1", caller)
	})
	if got := provider.Effects(); got <= 1 {
		t.Errorf("provider saw %d payments without the guard, want more than 1: the storm cannot show a duplicate", got)
	}
}

// A caller on SQLDB whose deadline fires while its Forever claim is in flight leaves no key
// open: the guard knows the pgx connection the claim went on, waits for its server process,
// and withdraws the claim if it landed, as on a pool. Every key's next call then runs, or
// replays a key that ran, and no key ran twice.
//
// An interrupted claim's connection is closed, and database/sql dials its replacement on
// the next caller's context; so every call here dials (no idle connections are kept), and
// the deadlines are spread around a whole call's time, dial included, for some to fall in
// the claim's round trip. A call in the storm is slower than the lone call timed before it
// (the storm's callers dial together, behind a pooler one server connection at a time), by
// a factor the machine's load sets: a storm whose calls all ran, or were all cut short, is
// run again on fresh keys with the deadlines halved or doubled, and every storm's keys are
// checked.
func TestSQLDBCancelledCallersLeaveNoKeyOpen(t *testing.T) {
	t.Parallel()
	sqldb := setupSQL(t, 12)
	sqldb.SetMaxIdleConns(0)
	db := once.SQLDB(sqldb)
	rtt := sqlCallTime(t, db)
	t.Logf("a call with its dial: %v", rtt)
	type storm struct {
		g    once.Forever
		runs []atomic.Int32
	}
	call := func(ctx context.Context, s *storm, i int) (once.Outcome, error) {
		return s.g.Do(ctx, db, once.Ref{Key: once.MustKey(fmt.Sprint("k", i))}, func(context.Context) error { s.runs[i].Add(1); return nil })
	}
	var storms []*storm
	mixed := false
	for attempt := 0; attempt < sqlDeadlineAttempts && !mixed; attempt++ {
		s := &storm{g: once.Forever{Name: fmt.Sprint("unseen.sqldb.", attempt)}, runs: make([]atomic.Int32, sqlDeadlineCalls)}
		storms = append(storms, s)
		var ran, cut atomic.Int32
		_, err := deadlineStorm(sqlDeadlineCalls, stormWorkers, rtt, func(ctx context.Context, i int) error {
			out, err := call(ctx, s, i)
			switch {
			case out.Status == once.Ran && err != nil:
				return fmt.Errorf("ran, but returned %v", err)
			case out.Status == once.Ran:
				ran.Add(1)
			case err != nil:
				cut.Add(1)
			}
			return err
		})
		if err != nil {
			t.Fatalf("a call failed otherwise than by its deadline: %v", err)
		}
		t.Logf("deadlines around %v: %d calls ran, %d were cut short", rtt, ran.Load(), cut.Load())
		switch {
		case ran.Load() == 0:
			rtt *= 2
		case cut.Load() == 0:
			rtt /= 2
		default:
			mixed = true
		}
	}
	// Every clean-up is done, the repeats behind a pooler included.
	if _, pooled := pgtest.Pooled(); pooled {
		time.Sleep(lateRecheckEnd)
	} else {
		time.Sleep(time.Second)
	}
	sqldb.SetMaxIdleConns(2)
	if !mixed {
		t.Fatalf("in %d storms, no deadline fell in a claim's round trip: every storm's calls all ran or were all cut short", len(storms))
	}
	for _, s := range storms {
		var open int
		if err := sqldb.QueryRow(`SELECT count(*) FROM once.operations WHERE name = $1 AND state = 'open'`, s.g.Name).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open != 0 {
			t.Fatalf("%s: %d keys left open with no caller running them", s.g.Name, open)
		}
		for i := range sqlDeadlineCalls {
			before := s.runs[i].Load()
			out, err := call(context.Background(), s, i)
			if err != nil {
				t.Fatalf("%s key %d: the next call: %+v, %v", s.g.Name, i, out, err)
			}
			if want := map[int32]once.Status{0: once.Ran, 1: once.Duplicate}[before]; out.Status != want {
				t.Fatalf("%s key %d had run %d times; the next call got %v, want %v", s.g.Name, i, before, out.Status, want)
			}
			if s.runs[i].Load() != 1 {
				t.Fatalf("%s key %d ran %d times, want once", s.g.Name, i, s.runs[i].Load())
			}
		}
	}
	if s := sqldb.Stats(); s.InUse != 0 {
		t.Errorf("%d connections still in use, want 0", s.InUse)
	}
}

// The clean-up of an unseen claim on SQLDB connects again when its first connections fail, as
// they can just after a storm broke the claim's own: a claim blocked behind another
// transaction's uncommitted row is cancelled by its caller, the next two dials of the
// *sql.DB are refused, and the clean-up still reaches the server, settles the claim's fate and
// leaves the key free. Without the retry the call gives up connecting and can only tell its
// caller that the key may stay open until the stale window.
func TestSQLDBCleanupConnectsAgainAfterRefusedDials(t *testing.T) {
	t.Parallel()
	_, d := setupSQLDatabase(t, 4)
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	sqldb := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(context.Context, *pgx.Conn) error {
		if n := dials.Add(1); n == 2 || n == 3 {
			return fmt.Errorf("dial %d refused by the test", n)
		}
		return nil
	}))
	defer sqldb.Close()
	sqldb.SetMaxIdleConns(0)
	db := once.SQLDB(sqldb)

	g := once.Forever{Name: "unseen.redial"}
	ref := once.Ref{Key: "k"}
	blocker, err := pgx.Connect(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close(ctx)
	tx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := g.Do(ctx, tx, ref, func(context.Context) error { return nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("the blocking transaction's call: %+v, %v", out, err)
	}

	// The caller is cancelled once its claim waits for the blocking transaction's row.
	watcher, err := pgx.Connect(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(ctx)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer cancel()
		for cctx.Err() == nil {
			var waiting int
			err := watcher.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
			if err != nil || waiting > 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ran := false
	_, err = g.Do(cctx, db, ref, func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("the blocked call: ran %v, %v; want its cancellation", ran, err)
	}
	if strings.Contains(err.Error(), "left open") {
		t.Fatalf("the clean-up gave up: %v", err)
	}
	if n := dials.Load(); n < 4 {
		t.Fatalf("%d dials, want the claim's, two refused and the clean-up's", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a claim still waiting for the lock would land now
	var open int
	if err := blocker.QueryRow(ctx, `SELECT count(*) FROM once.operations WHERE name = $1 AND state = 'open'`, g.Name).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Fatalf("%d keys left open with no caller running them", open)
	}
	if out, err := g.Do(ctx, db, ref, func(context.Context) error { return nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("the next call: %+v, %v; want Ran", out, err)
	}
}

// sqlDeadlineCalls is how many calls the cancelled storm on SQLDB makes: each dials.
// sqlDeadlineAttempts bounds the storms run before one has both calls that ran and calls
// cut short.
const (
	sqlDeadlineCalls    = 80
	sqlDeadlineAttempts = 5
)

// sqlCallTime is the median time of a Forever call on db, on keys of a guard of its own.
func sqlCallTime(t *testing.T, db once.DB) time.Duration {
	t.Helper()
	var ds []time.Duration
	for i := range 9 {
		start := time.Now()
		if _, err := (once.Forever{Name: "unseen.timing"}).Do(context.Background(), db, once.Ref{Key: fmt.Sprint(i)}, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// Every kind that takes a DB keeps its promise on SQLDB: the first call runs, and the call
// that must not run gets the status the package doc's table gives it. The nested calls run
// while the outer one holds its connection, so the pool hands out a second one meanwhile;
// a transaction's work commits with it.
func TestSQLDBEveryKind(t *testing.T) {
	t.Parallel()
	sqldb := setupSQL(t, 8)
	db := once.SQLDB(sqldb)
	ctx := context.Background()
	kinds := []struct {
		name  string
		first func() (once.Outcome, error)
		then  func() (once.Outcome, error)
		want  once.Status
	}{
		{
			name: "forever",
			first: func() (once.Outcome, error) {
				return once.Forever{Name: "k.forever"}.Do(ctx, db, once.Ref{Key: "1"}, noop)
			},
			then: func() (once.Outcome, error) {
				return once.Forever{Name: "k.forever"}.Do(ctx, db, once.Ref{Key: "1"}, noop)
			},
			want: once.Duplicate,
		},
		{
			name:  "episode",
			first: func() (once.Outcome, error) { return once.Episode{Name: "k.episode"}.Do(ctx, db, "1", noop) },
			then:  func() (once.Outcome, error) { return once.Episode{Name: "k.episode"}.Do(ctx, db, "1", noop) },
			want:  once.Duplicate,
		},
		{
			name: "statement",
			first: func() (once.Outcome, error) {
				return once.Statement{Name: "k.statement", Cap: 1}.Do(ctx, db, "1", 1, noop)
			},
			then: func() (once.Outcome, error) {
				return once.Statement{Name: "k.statement", Cap: 1}.Do(ctx, db, "1", 1, noop)
			},
			want: once.Refused,
		},
	}
	for _, k := range kinds {
		out, err := k.first()
		if err != nil || out.Status != once.Ran {
			t.Fatalf("%s: the first call: %v, %v; want ran", k.name, out.Status, err)
		}
		out, err = k.then()
		if out.Status != k.want || (err != nil && !errors.Is(err, out.Err())) {
			t.Fatalf("%s: the second call: %v, %v; want %v", k.name, out.Status, err, k.want)
		}
	}
	// Open and Lease: a call while the first holds the key does not run.
	nested := []struct {
		name string
		do   func(fn func(context.Context) error) (once.Outcome, error)
		want once.Status
	}{
		{"open", func(fn func(context.Context) error) (once.Outcome, error) {
			return once.Open{Name: "k.open"}.Do(ctx, db, "1", fn)
		}, once.InFlight},
		{"lease", func(fn func(context.Context) error) (once.Outcome, error) {
			return once.Lease{Name: "k.lease", TTL: time.Minute}.Do(ctx, db, "1", fn)
		}, once.Busy},
	}
	for _, k := range nested {
		var inner once.Outcome
		out, err := k.do(func(context.Context) error {
			var err error
			inner, err = k.do(noop)
			if err != nil && !errors.Is(err, inner.Err()) {
				return err
			}
			return nil
		})
		if err != nil || out.Status != once.Ran {
			t.Fatalf("%s: the holder: %v, %v; want ran", k.name, out.Status, err)
		}
		if inner.Status != k.want {
			t.Fatalf("%s: the call while held: %v, want %v", k.name, inner.Status, k.want)
		}
	}
	// Transaction: the function's work commits with the lock's transaction, on one connection.
	out, err := once.Transaction{Name: "k.tx"}.Do(ctx, db, "1", func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO effects (guard, key, caller) VALUES ('k.tx', '1', 0)")
		return err
	})
	if err != nil || out.Status != once.Ran {
		t.Fatalf("transaction: %v, %v; want ran", out.Status, err)
	}
	if n := effects(t, db, "k.tx", "1"); n != 1 {
		t.Fatalf("transaction: %d effect rows committed, want 1", n)
	}
	if s := sqldb.Stats(); s.InUse != 0 {
		t.Errorf("%d connections still in use, want 0", s.InUse)
	}
}

func noop(context.Context) error { return nil }

// A *sql.DB on another driver is refused with an error that names the driver and wraps
// ErrInvalid, before anything is claimed.
func TestSQLDBRefusesOtherDrivers(t *testing.T) {
	t.Parallel()
	sqldb := sql.OpenDB(fakeConnector{})
	defer sqldb.Close()
	_, err := once.Forever{Name: "billing.Charge"}.Do(context.Background(), once.SQLDB(sqldb), once.Ref{Key: "k"}, func(context.Context) error {
		t.Error("the function ran on a *sql.DB of another driver")
		return nil
	})
	if !errors.Is(err, once.ErrInvalid) || !strings.Contains(err.Error(), "stdlib") {
		t.Errorf("err = %v, want ErrInvalid naming pgx's stdlib driver", err)
	}
}

// fakeConnector is a database/sql driver that is not pgx's: its connections do nothing.
type fakeConnector struct{}

func (fakeConnector) Connect(context.Context) (driver.Conn, error) { return fakeConn{}, nil }
func (fakeConnector) Driver() driver.Driver                        { return nil }

type fakeConn struct{}

func (fakeConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("fake driver: no statements")
}
func (fakeConn) Close() error              { return nil }
func (fakeConn) Begin() (driver.Tx, error) { return nil, errors.New("fake driver: no transactions") }
