package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/runtime/onceschema"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// Config sizes a run.
type Config struct {
	Keys    int      // fresh keys per scenario, split evenly over the rounds
	Storm   int      // attempts per storm on one key
	Rounds  int      // rounds; each runs a slice of every scenario's fresh keys and one storm of each
	Workers int      // goroutines calling at once, per scenario
	Conns   int      // connections in each scenario's pool
	Cap     int64    // the statement guard's cap in a storm
	Kinds   []string // the kinds of scenario to run beside the floor; all when empty
}

func (c Config) check() error {
	if c.Keys < c.Rounds || c.Storm < 1 || c.Rounds < 1 || c.Workers < 1 || c.Conns < 1 || c.Cap < 1 || int64(c.Storm) < c.Cap {
		return fmt.Errorf("config %+v: every count must be positive, keys at least one per round, and a storm at least the cap", c)
	}
	return nil
}

// only keeps the floor and the scenarios of the kinds asked for.
func (c Config) only(ss []*scenario) []*scenario {
	if len(c.Kinds) == 0 {
		return ss
	}
	var kept []*scenario
	for _, s := range ss {
		if s.kind == "floor" || slices.Contains(c.Kinds, s.kind) {
			kept = append(kept, s)
		}
	}
	return kept
}

// measure is what one scenario cost over its slices or storms: calls made, time spent
// calling, WAL written and round trips sent while they ran.
type measure struct {
	calls    int64
	elapsed  time.Duration
	walBytes int64
	trips    int64
}

func (m measure) perSecond() float64 {
	if m.elapsed <= 0 {
		return 0
	}
	return float64(m.calls) / m.elapsed.Seconds()
}

func (m measure) per(x int64) float64 {
	if m.calls == 0 {
		return 0
	}
	return float64(x) / float64(m.calls)
}

// Run creates a database on the server adminURL names, runs every scenario in rounds, and
// reports. Progress goes to log.
func Run(ctx context.Context, adminURL string, cfg Config, log io.Writer) (*Report, error) {
	return run(ctx, adminURL, cfg, cfg.only(newScenarios(cfg)), log)
}

func run(ctx context.Context, adminURL string, cfg Config, scenarios []*scenario, log io.Writer) (*Report, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	dbURL, drop, err := createDatabase(ctx, adminURL)
	if err != nil {
		return nil, err
	}
	defer drop()
	admin, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	defer admin.Close()
	if err := onceschema.Migrate(ctx, admin); err != nil {
		return nil, err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(admin), nil)
	if err != nil {
		return nil, fmt.Errorf("river migrate: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("river migrate: %w", err)
	}
	if _, err := admin.Exec(ctx, floorTableSQL); err != nil {
		return nil, fmt.Errorf("floor table: %w", err)
	}

	for _, s := range scenarios {
		if err := s.open(ctx, dbURL, cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		defer s.close()
	}
	wal := &walMeter{pool: admin}
	per := cfg.Keys / cfg.Rounds
	for round := range cfg.Rounds {
		n := per
		if round == cfg.Rounds-1 {
			n = cfg.Keys - per*(cfg.Rounds-1)
		}
		first := round * per
		for i := range scenarios {
			s := scenarios[(i+round)%len(scenarios)]
			keys := func(j int) string { return "f-" + strconv.Itoa(first+j) }
			m, effects, err := s.slice(ctx, wal, cfg.Workers, n, keys)
			if err != nil {
				return nil, fmt.Errorf("%s: fresh keys, round %d: %w", s.name, round+1, err)
			}
			s.fresh.add(m)
			s.freshEffects += effects
		}
		for i := range scenarios {
			s := scenarios[(i+round)%len(scenarios)]
			key := "storm-" + strconv.Itoa(round)
			m, effects, err := s.slice(ctx, wal, cfg.Workers, cfg.Storm, func(int) string { return key })
			if err != nil {
				return nil, fmt.Errorf("%s: storm, round %d: %w", s.name, round+1, err)
			}
			s.storm.add(m)
			if err := s.stormState(ctx, admin, key, effects); err != nil {
				s.problems = append(s.problems, fmt.Sprintf("storm %d: %v", round+1, err))
			}
		}
		fmt.Fprintf(log, "round %d of %d done\n", round+1, cfg.Rounds)
	}
	for _, s := range scenarios {
		if s.freshEffects != int64(cfg.Keys) {
			s.problems = append(s.problems, fmt.Sprintf("fresh keys: %d calls did the work, want %d", s.freshEffects, cfg.Keys))
		}
		if err := s.freshState(ctx, admin, cfg.Keys); err != nil {
			s.problems = append(s.problems, "fresh keys: "+err.Error())
		}
	}
	return newReport(cfg, scenarios), nil
}

func (m *measure) add(o measure) {
	m.calls += o.calls
	m.elapsed += o.elapsed
	m.walBytes += o.walBytes
	m.trips += o.trips
}

// slice makes n calls of s with workers goroutines, the j-th on keys(j), and measures them.
// It returns how many calls did the work (a reservation made, a latch fired, a claim or an
// insert won).
func (s *scenario) slice(ctx context.Context, wal *walMeter, workers, n int, keys func(int) string) (measure, int64, error) {
	start, err := wal.position(ctx)
	if err != nil {
		return measure{}, 0, err
	}
	trips := s.trips.n.Load()
	var next, effects atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	began := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				j := int(next.Add(1)) - 1
				if j >= n {
					return
				}
				did, err := s.call(ctx, keys(j))
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				if did {
					effects.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil && s.settled != nil {
		firstErr = s.settled(ctx, effects.Load())
	}
	elapsed := time.Since(began)
	if firstErr != nil {
		return measure{}, 0, firstErr
	}
	written, err := wal.since(ctx, start)
	if err != nil {
		return measure{}, 0, err
	}
	return measure{calls: int64(n), elapsed: elapsed, walBytes: written, trips: s.trips.n.Load() - trips}, effects.Load(), nil
}

// walMeter reads the server's WAL insert position: the bytes of WAL between two readings are
// what the calls between them wrote (the benchmark's database is the only one in use).
type walMeter struct{ pool *pgxpool.Pool }

func (w *walMeter) position(ctx context.Context) (string, error) {
	var lsn string
	if err := w.pool.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
		return "", fmt.Errorf("reading the WAL position: %w", err)
	}
	return lsn, nil
}

func (w *walMeter) since(ctx context.Context, start string) (int64, error) {
	var n int64
	if err := w.pool.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint", start).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading the WAL position: %w", err)
	}
	return n, nil
}

// tripCounter is a pgx tracer that counts round trips: a statement sent alone, a pipelined
// batch, a COPY, a prepare.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *tripCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (c *tripCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *tripCounter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}
func (c *tripCounter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *tripCounter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// createDatabase makes a database of its own for the run and returns its URL and a function
// that drops it.
func createDatabase(ctx context.Context, adminURL string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("connecting to the server: %w", err)
	}
	defer conn.Close(ctx)
	name := "once_throughput_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("creating the database: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("server URL: %w", err)
	}
	u.Path = "/" + name
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(dctx, adminURL); err == nil {
			c.Exec(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(dctx)
		}
	}
	return u.String(), drop, nil
}
