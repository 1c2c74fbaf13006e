package once_test

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

// Each benchmark measures a guard against the bare SQL it wraps, in the same run, on the same
// pool and tables: the SQL is the same, so the ratio is the guard's own cost (validation, a
// token, error handling). For each pair it runs
//
//	bare, guard                    serially
//	bare-parallel, guard-parallel  with 4 goroutines per CPU, each on its own connection
//	guard-vs-bare(-parallel)       the two alternating, reporting each one's median time per
//	                               call and guard/bare: on a shared machine, load comes and
//	                               goes between sub-benchmarks, and alternating puts both
//	                               under the same load
//
// Bare runs first, so the guard meets the larger table. Run:
//
//	go test -bench . -run '^$' -benchtime 3000x ./runtime/

const benchParallelism = 4

// benchPool gives a benchmark a fresh database with once's schema.
func benchPool(b *testing.B) *pgxpool.Pool {
	b.Helper()
	pool := pgtest.NewDatabase(b).Pool(b, 4*benchParallelism+2)
	if err := onceschema.Migrate(context.Background(), pool); err != nil {
		b.Fatal(err)
	}
	return pool
}

// benchKeys hands out fresh keys, distinct across sub-benchmarks and goroutines.
type benchKeys struct {
	prefix string
	n      atomic.Int64
}

func (k *benchKeys) next() string { return k.prefix + strconv.FormatInt(k.n.Add(1), 10) }

// benchOp prepares one goroutine's operation: called once per goroutine, it returns the call
// to time.
type benchOp func(b *testing.B, keys *benchKeys) func() error

// compare runs ops[0] and ops[1] (named by names) serially, in parallel, and alternating.
func compare(b *testing.B, names [2]string, ops [2]benchOp) {
	// Key sources outlive the calls of a sub-benchmark (the framework calls it again with a
	// larger b.N), so no key is handed out twice.
	newKeys := func(sub string) *benchKeys { return &benchKeys{prefix: sub + "/"} }
	for i := range 2 {
		serial, parallel := newKeys(names[i]), newKeys(names[i]+"-parallel")
		b.Run(names[i], func(b *testing.B) {
			do := ops[i](b, serial)
			b.ResetTimer()
			for range b.N {
				if err := do(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(names[i]+"-parallel", func(b *testing.B) {
			b.SetParallelism(benchParallelism)
			b.ResetTimer()
			b.RunParallel(func(p *testing.PB) {
				do := ops[i](b, parallel)
				for p.Next() {
					if err := do(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	vs := names[1] + "-vs-" + names[0]
	serial := [2]*benchKeys{newKeys(vs + "-0"), newKeys(vs + "-1")}
	parallel := [2]*benchKeys{newKeys(vs + "-parallel-0"), newKeys(vs + "-parallel-1")}
	b.Run(vs, func(b *testing.B) { alternate(b, names, ops, serial, false) })
	b.Run(vs+"-parallel", func(b *testing.B) { alternate(b, names, ops, parallel, true) })
}

// alternate runs the two operations in turn (ABBA, so neither always goes first) and reports
// each one's median time per call and the ratio of the medians, so that both meet the same
// load and a stall of the machine in one call does not weigh on the result. Serially it times
// each call. In parallel it runs slices of calls: a slice of one operation on all workers,
// timed from its first call to its last, then a slice of the other, and so on; a call's time
// is its slice's time over the slice's calls. (Timing single calls inside b.RunParallel does
// not work here: a call's clock also runs while its goroutine waits for one of two CPUs,
// which skews whichever call comes first.)
func alternate(b *testing.B, names [2]string, ops [2]benchOp, keys [2]*benchKeys, parallel bool) {
	var per [2][]float64 // ns per call: of each call (serial), of each slice (parallel)
	if !parallel {
		do := [2]func() error{ops[0](b, keys[0]), ops[1](b, keys[1])}
		b.ResetTimer()
		for i := range b.N {
			for turn := range 2 {
				side := turn ^ i&1 // ABBA: neither side always goes first
				start := time.Now()
				if err := do[side](); err != nil {
					b.Fatal(err)
				}
				per[side] = append(per[side], float64(time.Since(start)))
			}
		}
	} else {
		workers := benchParallelism * runtime.GOMAXPROCS(0)
		var do [2][]func() error
		for side := range 2 {
			for range workers {
				do[side] = append(do[side], ops[side](b, keys[side]))
			}
		}
		const slice = 64 // calls per slice: 8 per worker, enough that starting the workers is noise
		b.ResetTimer()
		for round, calls := 0, 0; calls < b.N; round++ {
			n := min(slice, b.N-calls)
			for turn := range 2 {
				side := turn ^ round&1
				var left atomic.Int64
				left.Store(int64(n))
				var wg sync.WaitGroup
				start := time.Now()
				for w := range workers {
					wg.Go(func() {
						for left.Add(-1) >= 0 {
							if err := do[side][w](); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				per[side] = append(per[side], float64(time.Since(start))/float64(n))
			}
			calls += n
		}
	}
	if len(per[0]) == 0 {
		return
	}
	m := [2]float64{median(per[0]), median(per[1])}
	b.ReportMetric(m[0], names[0]+"-ns/op")
	b.ReportMetric(m[1], names[1]+"-ns/op")
	b.ReportMetric(m[1]/m[0], "ratio")
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func BenchmarkRequest(b *testing.B) {
	noop := func(context.Context) (int, error) { return 1, nil }
	// bare: the hand-written per-request memo, a mutex and a map.
	bare := func(b *testing.B, keys *benchKeys) func() error {
		var mu sync.Mutex
		memo := map[string]int{}
		return func() error {
			k := keys.next()
			mu.Lock()
			if _, ok := memo[k]; !ok {
				v, _ := noop(context.Background())
				memo[k] = v
			}
			mu.Unlock()
			return nil
		}
	}
	g := once.Request{Name: "auth.LoadUser"}
	guard := func(b *testing.B, keys *benchKeys) func() error {
		ctx := once.WithRequestScope(context.Background())
		return func() error { _, _, err := once.RequestValue(ctx, g, keys.next(), noop); return err }
	}
	compare(b, [2]string{"bare", "guard"}, [2]benchOp{bare, guard})
}

func BenchmarkProvider(b *testing.B) {
	ctx := context.Background()
	noop := func(context.Context) (int, error) { return 1, nil }
	// bare: the key written by hand and put in the context.
	bare := func(b *testing.B, keys *benchKeys) func() error {
		return func() error {
			_, err := noop(once.WithProviderKey(ctx, "fee-"+keys.next()))
			return err
		}
	}
	g := once.Provider{Prefix: "fee"}
	guard := func(b *testing.B, keys *benchKeys) func() error {
		return func() error { _, _, err := providerValue(ctx, g, keys.next(), noop); return err }
	}
	compare(b, [2]string{"bare", "guard"}, [2]benchOp{bare, guard})
}

func BenchmarkTransaction(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	// bare: BEGIN; pg_advisory_xact_lock; COMMIT.
	bare := func(b *testing.B, keys *benchKeys) func() error {
		return func() error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", once.LockID("sub.Sync", keys.next())); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}
	}
	g := once.Transaction{Name: "sub.Sync"}
	noop := func(context.Context, pgx.Tx) error { return nil }
	guard := func(b *testing.B, keys *benchKeys) func() error {
		return func() error { _, err := g.Do(ctx, pool, keys.next(), noop); return err }
	}
	compare(b, [2]string{"bare", "guard"}, [2]benchOp{bare, guard})
}

func BenchmarkStatement(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	// A key takes four reservations, each inserting one slot among those the key holds.
	key := func(keys *benchKeys) string { return keys.prefix + strconv.FormatInt(keys.n.Add(1)/4, 10) }
	bare := func(b *testing.B, keys *benchKeys) func() error {
		return func() error {
			var used, got int64
			k := key(keys)
			// The walk the guard takes, from a slot of its own (keys.n) with stride 1.
			return pool.QueryRow(ctx, once.ReserveSQL, "ideas.Generate", k, int64(1), int64(1000), keys.n.Load()%1000, int64(1), k).Scan(&used, &got)
		}
	}
	g := once.Statement{Name: "ideas.Generate", Cap: 1000}
	guard := func(b *testing.B, keys *benchKeys) func() error {
		return func() error { _, _, err := g.Reserve(ctx, pool, key(keys), 1); return err }
	}
	compare(b, [2]string{"bare", "guard"}, [2]benchOp{bare, guard})
}

func BenchmarkEpisode(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	g := once.Episode{Name: "alerts.Credit"}
	fire := func(key func(*benchKeys) string) [2]benchOp {
		bare := func(b *testing.B, keys *benchKeys) func() error {
			return func() error {
				rows, err := pool.Query(ctx, once.FireSQL, "alerts.Credit", key(keys), "0123456789abcdef0123456789abcdef")
				if err != nil {
					return err
				}
				rows.Close()
				return rows.Err()
			}
		}
		guard := func(b *testing.B, keys *benchKeys) func() error {
			return func() error { _, err := g.Do(ctx, pool, key(keys), noop); return err }
		}
		return [2]benchOp{bare, guard}
	}
	compare(b, [2]string{"bare", "guard"}, fire((*benchKeys).next))
	// The duplicate path: a latch already set answers with no row, still one statement.
	if _, err := g.Do(ctx, pool, "fired", noop); err != nil {
		b.Fatal(err)
	}
	compare(b, [2]string{"bare-duplicate", "guard-duplicate"}, fire(func(*benchKeys) string { return "fired" }))
}

// claimCTESQL is the other way to close a stale claim "at every claim" in one statement:
// the close runs first, on every claim, fresh key or not. The benchmark compares it with the
// guard's insert-first form, which only looks for a stale claim after a conflict.
const claimCTESQL = `WITH stale AS (
	UPDATE once.open_claims SET state = 'stale', closed_at = clock_timestamp(), reason = 'stale'
	WHERE name = $1 AND key = $2 AND state = 'open'
	AND opened_at <= clock_timestamp() - $4::bigint * interval '1 microsecond'
	RETURNING 1
)
INSERT INTO once.open_claims (name, key, token)
SELECT $1, $2, $3 FROM (SELECT count(*) FROM stale) AS closed
ON CONFLICT (name, key) WHERE state = 'open' DO NOTHING
RETURNING id`

// bareClaimSQL is the bare partial-unique claim an Open guard's claim is measured against:
// the insert alone, with no stale window of its own.
const bareClaimSQL = `INSERT INTO once.open_claims (name, key, token) VALUES ($1, $2, $3)
ON CONFLICT (name, key) WHERE state = 'open' DO NOTHING
RETURNING id`

func BenchmarkOpen(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	const token = "0123456789abcdef0123456789abcdef"
	g := once.Open{Name: "research.Start"}
	claim := func(key func(*benchKeys) string) [2]benchOp {
		bare := func(b *testing.B, keys *benchKeys) func() error {
			return func() error {
				rows, err := pool.Query(ctx, bareClaimSQL, "research.Start", key(keys), token)
				if err != nil {
					return err
				}
				rows.Close()
				return rows.Err()
			}
		}
		guard := func(b *testing.B, keys *benchKeys) func() error {
			return func() error { _, _, err := g.Claim(ctx, pool, key(keys)); return err }
		}
		return [2]benchOp{bare, guard}
	}
	compare(b, [2]string{"bare", "guard"}, claim((*benchKeys).next))

	// Insert first (the guard) against closing stale claims first in a CTE, on fresh keys.
	stale := (20 * time.Minute).Microseconds()
	cte := func(b *testing.B, keys *benchKeys) func() error {
		return func() error {
			var id int64
			return pool.QueryRow(ctx, claimCTESQL, "research.Start", keys.next(), token, stale).Scan(&id)
		}
	}
	compare(b, [2]string{"insert-first", "cte"}, [2]benchOp{claim((*benchKeys).next)[1], cte})

	// The duplicate path: the bare insert only learns "conflict"; the guard also reads the
	// open claim's handle, a second statement for its first two duplicates, then in the same
	// statement as the claim (see claimOrReadSQL).
	if _, _, err := g.Claim(ctx, pool, "open"); err != nil {
		b.Fatal(err)
	}
	compare(b, [2]string{"bare-duplicate", "guard-duplicate"}, claim(func(*benchKeys) string { return "open" }))
}

func BenchmarkLease(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	ttl := (10 * time.Second).Microseconds()
	// A lease is reused: each goroutine takes and releases a key of its own, over and over,
	// as a per-organisation lock is.
	bare := func(b *testing.B, keys *benchKeys) func() error {
		key, token := keys.next(), "0123456789abcdef0123456789abcdef"
		return func() error {
			var fence int64
			var expires time.Time
			if err := pool.QueryRow(ctx, once.AcquireSQL, "ideas.Lock", key, token, ttl).Scan(&fence, &expires); err != nil {
				return err
			}
			_, err := pool.Exec(ctx, once.ReleaseSQL, "ideas.Lock", key, token)
			return err
		}
	}
	g := once.Lease{Name: "ideas.Lock", TTL: 10 * time.Second}
	noop := func(context.Context) error { return nil }
	guard := func(b *testing.B, keys *benchKeys) func() error {
		key := keys.next()
		return func() error { _, err := g.Do(ctx, pool, key, noop); return err }
	}
	compare(b, [2]string{"bare", "guard"}, [2]benchOp{bare, guard})
}
