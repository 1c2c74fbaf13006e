package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/oncehttp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// floorTableSQL is the bare floor's table, a key and nothing else, and the same table for
// the floor's insert made twice in a call; and the counter row the Statement guard's twin
// keeps per key, as code without the guard would.
const floorTableSQL = `CREATE TABLE floor (key text PRIMARY KEY); CREATE TABLE floor_pair (key text PRIMARY KEY);
CREATE TABLE twin_counters (name text NOT NULL, key text NOT NULL, used bigint NOT NULL CHECK (used >= 0),
	cap bigint NOT NULL CHECK (cap >= 0), updated_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (name, key))`

// The bare twins: the statement each guard wraps, written by hand the plain way, on rows of
// their own (the twin.* names). Statement's and Episode's are the conditional upserts alone,
// which lock the row they refuse.
const (
	floorSQL = `INSERT INTO floor (key) VALUES ($1) ON CONFLICT DO NOTHING`
	// floorPairSQL is the floor's insert into a table of its own, for the call that makes it
	// twice: the bound of any call of two statements, each its own commit.
	floorPairSQL = `INSERT INTO floor_pair (key) VALUES ($1) ON CONFLICT DO NOTHING`

	statementTwinSQL = `INSERT INTO twin_counters AS c (name, key, used, cap)
SELECT 'twin.statement', $1::text, 1, $2::bigint
ON CONFLICT (name, key) DO UPDATE SET used = c.used + EXCLUDED.used, cap = EXCLUDED.cap, updated_at = clock_timestamp()
WHERE c.used + EXCLUDED.used <= EXCLUDED.cap
RETURNING used`

	episodeTwinSQL = `INSERT INTO once.latches AS l (name, key, fired_at, firings, token)
VALUES ('twin.episode', $1, clock_timestamp(), 1, $2)
ON CONFLICT (name, key) DO UPDATE SET fired_at = clock_timestamp(), firings = l.firings + 1
WHERE l.fired_at IS NULL
RETURNING firings`

	openTwinSQL = `INSERT INTO once.open_claims (name, key, token, stale_after) VALUES ('twin.open', $1, $2, interval '20 minutes')
ON CONFLICT (name, key) WHERE state = 'open' DO NOTHING
RETURNING id`

	foreverTwinClaimSQL = `INSERT INTO once.operations (name, scope, key, id, token) VALUES ('twin.forever', '', $1, $2, $3)
ON CONFLICT (name, scope, key) DO NOTHING`
	foreverTwinSettleSQL = `UPDATE once.operations SET state = 'done', result = '1', settled_at = clock_timestamp()
WHERE name = 'twin.forever' AND scope = '' AND key = $1 AND token = $2 AND state = 'open'`
	foreverTwinReadSQL = `SELECT state::text, result FROM once.operations WHERE name = 'twin.forever' AND scope = '' AND key = $1`
)

// scenario is one thing measured: a guard, its bare twin, the floor, or River.
type scenario struct {
	name string
	// kind groups a guard with its twin in the report; floor and river are their own.
	kind string
	twin bool
	// lifecycle marks a scenario that does its work to the end (a claim and its settle, a job
	// inserted and completed): it is compared with River's insert and completion, the others
	// with River's unique insert.
	lifecycle bool

	pool  *pgxpool.Pool
	trips *tripCounter
	// setup runs once the pool is open (River's clients).
	setup func(ctx context.Context) error
	// call makes one call on key and reports whether it did the work.
	call func(ctx context.Context, key string) (bool, error)
	// settled, when set, waits after a slice until the work it started is finished (River's
	// jobs completed), inside the slice's time.
	settled func(ctx context.Context, effects int64) error
	// freshState checks the rows of all fresh keys, stormState those of one storm.
	freshState func(ctx context.Context, db *pgxpool.Pool, keys int) error
	stormState func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error
	stop       func()

	fresh, storm measure
	freshEffects int64
	problems     []string
}

func (s *scenario) open(ctx context.Context, dbURL string, cfg Config) error {
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	s.trips = &tripCounter{}
	pcfg.ConnConfig.Tracer = s.trips
	pcfg.MaxConns = int32(cfg.Conns)
	pcfg.MinConns = int32(cfg.Conns)
	if s.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return err
	}
	// Open every connection before anything is timed.
	conns := make([]*pgxpool.Conn, cfg.Conns)
	for i := range conns {
		if conns[i], err = s.pool.Acquire(ctx); err != nil {
			return err
		}
	}
	for _, c := range conns {
		c.Release()
	}
	if s.setup != nil {
		return s.setup(ctx)
	}
	return nil
}

func (s *scenario) close() {
	if s.stop != nil {
		s.stop()
	}
	s.pool.Close()
}

// wantEffects checks a storm's count of calls that did the work.
func wantEffects(effects, want int64) error {
	if effects != want {
		return fmt.Errorf("%d calls did the work, want %d", effects, want)
	}
	return nil
}

// countIs runs a count query and compares.
func countIs(ctx context.Context, db *pgxpool.Pool, want int64, what, sql string, args ...any) error {
	var n int64
	if err := db.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n != want {
		return fmt.Errorf("%s: %d, want %d", what, n, want)
	}
	return nil
}

// both runs the checks in turn and returns the first error.
func both(errs ...func() error) error {
	for _, f := range errs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func newScenarios(cfg Config) []*scenario {
	var ss []*scenario
	add := func(s *scenario) { ss = append(ss, s) }
	noop := func(context.Context) error { return nil }
	one := func(context.Context) (int, error) { return 1, nil }
	token := "0123456789abcdef0123456789abcdef"

	// (a): the bare floor.
	floor := &scenario{name: "(a) INSERT .. ON CONFLICT DO NOTHING", kind: "floor", twin: true}
	floor.call = func(ctx context.Context, key string) (bool, error) {
		tag, err := floor.pool.Exec(ctx, floorSQL, key)
		return tag.RowsAffected() == 1, err
	}
	floor.freshState = func(ctx context.Context, db *pgxpool.Pool, keys int) error {
		return countIs(ctx, db, int64(keys), "rows", `SELECT count(*) FROM floor WHERE key LIKE 'f-%'`)
	}
	floor.stormState = func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error {
		return both(func() error { return wantEffects(effects, 1) },
			func() error { return countIs(ctx, db, 1, "rows", `SELECT count(*) FROM floor WHERE key = $1`, key) })
	}
	add(floor)

	// Statement: fresh keys reserve 1 of the cap; a storm fills the cap and is refused after.
	stmt := &scenario{name: "Statement.Reserve (storm: cap " + fmt.Sprint(cfg.Cap) + ")", kind: "statement"}
	sg := once.Statement{Name: "bench.statement", Cap: cfg.Cap}
	stmt.call = func(ctx context.Context, key string) (bool, error) {
		_, ok, err := sg.Reserve(ctx, stmt.pool, key, 1)
		return ok, err
	}
	stmtTwin := &scenario{name: "twin: conditional upsert", kind: "statement", twin: true}
	stmtTwin.call = func(ctx context.Context, key string) (bool, error) {
		var used int64
		err := stmtTwin.pool.QueryRow(ctx, statementTwinSQL, key, cfg.Cap).Scan(&used)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	for _, s := range []*scenario{stmt, stmtTwin} {
		name := map[bool]string{false: sg.Name, true: "twin.statement"}[s.twin]
		// The guard holds a key's units as slot rows (once.counter_slots); its twin counts
		// them in one counter row.
		freshSQL := `SELECT count(*) FROM twin_counters WHERE name = $1 AND key LIKE 'f-%' AND used = 1`
		usedSQL := `SELECT coalesce(sum(used), 0) FROM twin_counters WHERE name = $1 AND key = $2`
		if !s.twin {
			freshSQL = `SELECT count(*) FROM (SELECT key FROM once.counter_slots WHERE name = $1 AND key LIKE 'f-%' GROUP BY key HAVING count(*) = 1) AS k`
			usedSQL = `SELECT count(*) FROM once.counter_slots WHERE name = $1 AND key = $2`
		}
		s.freshState = func(ctx context.Context, db *pgxpool.Pool, keys int) error {
			return countIs(ctx, db, int64(keys), "counters at 1", freshSQL, name)
		}
		s.stormState = func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error {
			return both(func() error { return wantEffects(effects, cfg.Cap) },
				func() error {
					return countIs(ctx, db, cfg.Cap, "units used", usedSQL, name, key)
				})
		}
		add(s)
	}

	// Episode: a fresh key fires; a storm fires once.
	ep := &scenario{name: "Episode.Do", kind: "episode"}
	eg := once.Episode{Name: "bench.episode"}
	ep.call = func(ctx context.Context, key string) (bool, error) {
		out, err := eg.Do(ctx, ep.pool, key, noop)
		return out.Status == once.Ran, err
	}
	epTwin := &scenario{name: "twin: conditional upsert", kind: "episode", twin: true}
	epTwin.call = func(ctx context.Context, key string) (bool, error) {
		var firing int64
		err := epTwin.pool.QueryRow(ctx, episodeTwinSQL, key, token).Scan(&firing)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	for _, s := range []*scenario{ep, epTwin} {
		name := map[bool]string{false: eg.Name, true: "twin.episode"}[s.twin]
		s.freshState = func(ctx context.Context, db *pgxpool.Pool, keys int) error {
			return countIs(ctx, db, int64(keys), "latches fired once", `SELECT count(*) FROM once.latches WHERE name = $1 AND key LIKE 'f-%' AND firings = 1 AND fired_at IS NOT NULL`, name)
		}
		s.stormState = func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error {
			return both(func() error { return wantEffects(effects, 1) },
				func() error {
					return countIs(ctx, db, 1, "firings", `SELECT coalesce(sum(firings), 0) FROM once.latches WHERE name = $1 AND key = $2`, name, key)
				})
		}
		add(s)
	}

	// Open: a fresh key is claimed; a storm makes one claim and redirects the rest to it.
	open := &scenario{name: "Open.Claim", kind: "open"}
	og := once.Open{Name: "bench.open"}
	var winners sync.Map // storm key -> winning claim's handle
	open.call = func(ctx context.Context, key string) (bool, error) {
		c, out, err := og.Claim(ctx, open.pool, key)
		if err != nil {
			return false, err
		}
		if c == nil {
			if w, ok := winners.Load(key); ok && w != out.Holder {
				return false, fmt.Errorf("redirected to claim %s, want %s", out.Holder, w)
			}
			return false, nil
		}
		winners.Store(key, out.Claim)
		return true, nil
	}
	openTwin := &scenario{name: "twin: partial-unique claim", kind: "open", twin: true}
	openTwin.call = func(ctx context.Context, key string) (bool, error) {
		var id int64
		err := openTwin.pool.QueryRow(ctx, openTwinSQL, key, token).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	for _, s := range []*scenario{open, openTwin} {
		name := map[bool]string{false: og.Name, true: "twin.open"}[s.twin]
		s.freshState = func(ctx context.Context, db *pgxpool.Pool, keys int) error {
			return countIs(ctx, db, int64(keys), "open claims", `SELECT count(*) FROM once.open_claims WHERE name = $1 AND key LIKE 'f-%' AND state = 'open'`, name)
		}
		s.stormState = func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error {
			return both(func() error { return wantEffects(effects, 1) },
				func() error {
					return countIs(ctx, db, 1, "claims", `SELECT count(*) FROM once.open_claims WHERE name = $1 AND key = $2`, name, key)
				})
		}
		add(s)
	}

	// Forever (for ever, and scoped and retained a day as a front door's operation),
	// oncehttp: claim, run, settle; a duplicate gets the record, and one that came while the
	// first call ran is answered in flight (no error).
	forever := &scenario{name: "Forever.Do (claim + settle)", kind: "forever", lifecycle: true}
	fg := once.Forever{Name: "bench.forever"}
	forever.call = func(ctx context.Context, key string) (bool, error) {
		_, out, err := once.ForeverValue(ctx, forever.pool, fg, once.Ref{Key: key}, one)
		return out.Status == once.Ran, err
	}
	foreverTwin := &scenario{name: "twin: INSERT claim + UPDATE settle", kind: "forever", twin: true, lifecycle: true}
	foreverTwin.call = func(ctx context.Context, key string) (bool, error) {
		tag, err := foreverTwin.pool.Exec(ctx, foreverTwinClaimSQL, key, newUUID(), token)
		if err != nil {
			return false, err
		}
		if tag.RowsAffected() == 0 {
			var state string
			var result []byte
			return false, foreverTwin.pool.QueryRow(ctx, foreverTwinReadSQL, key).Scan(&state, &result)
		}
		_, err = foreverTwin.pool.Exec(ctx, foreverTwinSettleSQL, key, token)
		return true, err
	}
	op := &scenario{name: "Forever.Do scoped, kept a day (an operation)", kind: "operation", lifecycle: true}
	og2 := once.Forever{Name: "bench.operation", Retain: 24 * time.Hour}
	op.call = func(ctx context.Context, key string) (bool, error) {
		_, out, err := once.ForeverValue(ctx, op.pool, og2, once.Ref{Scope: once.MustKey("acct"), Key: once.MustKey(key)}, one)
		return out.Status == once.Ran, err
	}
	web := &scenario{name: "oncehttp over a handler that writes nothing", kind: "oncehttp", lifecycle: true}
	var mw http.Handler
	web.setup = func(context.Context) error {
		wrap, err := oncehttp.New(oncehttp.Config{DB: web.pool, Name: "bench.http",
			Account: func(*http.Request) (string, error) { return "acct", nil }})
		if err != nil {
			return err
		}
		mw = wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
		return nil
	}
	web.call = func(ctx context.Context, key string) (bool, error) {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/actions", nil)
		req.Header.Set("Idempotency-Key", key)
		rec := httptest.NewRecorder()
		mw.ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusConflict:
			return false, nil // in flight
		case rec.Code != http.StatusOK:
			return false, fmt.Errorf("status %d: %s", rec.Code, rec.Body)
		}
		return rec.Header().Get("Idempotent-Replayed") == "", nil
	}
	for _, s := range []*scenario{forever, foreverTwin, op, web} {
		name := map[string]string{"forever": fg.Name, "operation": og2.Name, "oncehttp": "bench.http"}[s.kind]
		if s.twin {
			name = "twin.forever"
		}
		s.freshState = func(ctx context.Context, db *pgxpool.Pool, keys int) error {
			return countIs(ctx, db, int64(keys), "operations done", `SELECT count(*) FROM once.operations WHERE name = $1 AND key LIKE 'f-%' AND state = 'done'`, name)
		}
		s.stormState = func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error {
			return both(func() error { return wantEffects(effects, 1) },
				func() error {
					return countIs(ctx, db, 1, "operations done", `SELECT count(*) FROM once.operations WHERE name = $1 AND key = $2 AND state = 'done'`, name, key)
				})
		}
		add(s)
	}
	// What two round trips and two commits cost, whatever the statements: the floor's insert,
	// and when it inserted, a second one (as Forever settles only what it claimed).
	pair := &scenario{name: "two floor inserts, two commits: the bound of any two-statement call", kind: "forever", twin: true, lifecycle: true}
	pair.call = func(ctx context.Context, key string) (bool, error) {
		tag, err := pair.pool.Exec(ctx, floorPairSQL, key)
		if err != nil || tag.RowsAffected() == 0 {
			return false, err
		}
		_, err = pair.pool.Exec(ctx, floorPairSQL, key+"/settled")
		return true, err
	}
	pair.freshState = func(ctx context.Context, db *pgxpool.Pool, keys int) error {
		return countIs(ctx, db, 2*int64(keys), "rows", `SELECT count(*) FROM floor_pair WHERE key LIKE 'f-%'`)
	}
	pair.stormState = func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error {
		return both(func() error { return wantEffects(effects, 1) },
			func() error {
				return countIs(ctx, db, 2, "rows", `SELECT count(*) FROM floor_pair WHERE key IN ($1, $1 || '/settled')`, key)
			})
	}
	add(pair)

	// River: a unique insert (an insert-only client), and an insert whose job a running
	// client works and completes (the slice's time runs until its jobs are completed).
	ins := &scenario{name: "River unique insert", kind: "river"}
	var insClient *river.Client[pgx.Tx]
	ins.setup = func(context.Context) error {
		var err error
		insClient, err = river.NewClient(riverpgxv5.New(ins.pool), &river.Config{Logger: quiet})
		return err
	}
	ins.call = func(ctx context.Context, key string) (bool, error) {
		// A queue no client works: the jobs stay available, as the check expects.
		res, err := insClient.Insert(ctx, uniqueArgs{Key: key}, &river.InsertOpts{Queue: "unworked", UniqueOpts: river.UniqueOpts{ByArgs: true}})
		if err != nil {
			return false, err
		}
		return !res.UniqueSkippedAsDuplicate, nil
	}
	full := &scenario{name: "River unique insert + job completion", kind: "river", lifecycle: true}
	var fullClient *river.Client[pgx.Tx]
	var completed atomic.Int64
	worked := &sync.Map{} // key -> *atomic.Int64, runs of the job
	full.setup = func(ctx context.Context) error {
		workers := river.NewWorkers()
		river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[completedArgs]) error {
			n, _ := worked.LoadOrStore(job.Args.Key, &atomic.Int64{})
			n.(*atomic.Int64).Add(1)
			return nil
		}))
		var err error
		fullClient, err = river.NewClient(riverpgxv5.New(full.pool), &river.Config{
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 100}},
			Workers:           workers,
			Logger:            quiet,
			FetchCooldown:     5 * time.Millisecond,
			FetchPollInterval: 20 * time.Millisecond,
		})
		if err != nil {
			return err
		}
		events, cancel := fullClient.Subscribe(river.EventKindJobCompleted)
		go func() {
			for range events {
				completed.Add(1)
			}
		}()
		if err := fullClient.Start(ctx); err != nil {
			cancel()
			return err
		}
		full.stop = func() {
			sctx, done := context.WithTimeout(context.Background(), 10*time.Second)
			defer done()
			fullClient.Stop(sctx)
			cancel()
		}
		return nil
	}
	var expected atomic.Int64
	full.call = func(ctx context.Context, key string) (bool, error) {
		res, err := fullClient.Insert(ctx, completedArgs{Key: key}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}})
		if err != nil {
			return false, err
		}
		return !res.UniqueSkippedAsDuplicate, nil
	}
	full.settled = func(ctx context.Context, effects int64) error {
		want := expected.Add(effects)
		deadline := time.Now().Add(time.Minute)
		for completed.Load() < want {
			if time.Now().After(deadline) {
				return fmt.Errorf("%d of %d jobs completed after a minute", completed.Load(), want)
			}
			time.Sleep(200 * time.Microsecond)
		}
		return nil
	}
	for _, s := range []*scenario{ins, full} {
		kind := map[bool]string{false: uniqueArgs{}.Kind(), true: completedArgs{}.Kind()}[s.lifecycle]
		state := map[bool]string{false: "available", true: "completed"}[s.lifecycle]
		s.freshState = func(ctx context.Context, db *pgxpool.Pool, keys int) error {
			return countIs(ctx, db, int64(keys), "jobs "+state, `SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'key' LIKE 'f-%' AND state = $2`, kind, state)
		}
		s.stormState = func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error {
			return both(func() error { return wantEffects(effects, 1) },
				func() error {
					return countIs(ctx, db, 1, "jobs "+state, `SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'key' = $2 AND state = $3`, kind, key, state)
				},
				func() error {
					if !s.lifecycle {
						return nil
					}
					n, _ := worked.LoadOrStore(key, &atomic.Int64{})
					if runs := n.(*atomic.Int64).Load(); runs != 1 {
						return fmt.Errorf("the job ran %d times, want 1", runs)
					}
					return nil
				})
		}
		add(s)
	}
	return ss
}

// newUUID draws a version 4 UUID in PostgreSQL's text form, as a Forever guard draws its
// operation's id.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// quiet drops River's log: a benchmark prints its table.
var quiet = slog.New(slog.DiscardHandler)

// uniqueArgs is the job River's unique insert enqueues; no client works it.
type uniqueArgs struct {
	Key string `json:"key"`
}

func (uniqueArgs) Kind() string { return "bench_unique" }

// completedArgs is the job River's running client works and completes.
type completedArgs struct {
	Key string `json:"key"`
}

func (completedArgs) Kind() string { return "bench_completed" }
