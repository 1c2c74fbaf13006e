// Command storm fires many concurrent calls of each guarded function of package app at one
// key and prints, as JSON, how many effects each kind left: rows, or charges the fake
// provider performed. With -direct it calls the functions themselves, without their guards
// (and the table= inserts without their conflict clauses): the negative control.
//
// Like an application, it first proves with once.Verify that the database holds what the
// guards rely on, and refuses to run otherwise (not with -direct, which relies on nothing).
// With -verify it prints what once.Verify found, one problem a line, and exits. With -first
// N it makes one call of UseQuotaOnce taking N units of a fresh key's quota,
// and prints its outcome and the units the key holds after it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"example.com/e2e/app"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

const callers = 16

// Result is what one kind's storm left.
type Result struct {
	Effects int64 `json:"effects"`
	Ran     int64 `json:"ran"`
	Errors  int64 `json:"errors"`
	// Redirected counts the calls told another's work is in flight, with its handle.
	Redirected int64 `json:"redirected"`
	// FirstError is one error a call returned, if any did.
	FirstError string `json:"first_error,omitempty"`
}

func main() {
	dsn := flag.String("db", "", "database URL")
	direct := flag.Bool("direct", false, "call the functions without their guards")
	verify := flag.Bool("verify", false, "print once.Verify's problems, one a line, and exit")
	first := flag.Int64("first", 0, "make one call taking this many units of a fresh key's quota, and print its outcome")
	intents := flag.String("results", "", "call each CreateIntent guard twice for this order, and print what each call got")
	flag.Parse()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(*dsn)
	if err != nil {
		fail(err)
	}
	cfg.MaxConns = 2*callers + 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		fail(err)
	}
	defer pool.Close()
	app.Pool = pool
	if *verify {
		printProblems(once.Verify(ctx, pool))
		return
	}
	if !*direct {
		if err := once.Verify(ctx, pool); err != nil {
			fail(err)
		}
	}
	if *first > 0 {
		firstCall(ctx, pool, *first)
		return
	}
	if *intents != "" {
		resultCalls(ctx, pool, *intents)
		return
	}

	var performed atomic.Int64
	seen := sync.Map{}
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Like Stripe: a repeated Idempotency-Key replays; no key, or a new one, performs.
		if k := r.Header.Get("Idempotency-Key"); k != "" {
			if _, dup := seen.LoadOrStore(k, true); dup {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
		performed.Add(1)
	}))
	defer provider.Close()
	app.ProviderURL = provider.URL
	if *direct {
		for k := range app.Conflicts {
			app.Conflicts[k] = ""
		}
	}

	day := "2026-11-30"
	org := app.Org{ID: "org-7"}
	calls := map[string]func(ctx context.Context) (once.Outcome, error){
		"request": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				_, err := app.LoadProfile(ctx, org)
				return ran(err)
			}
			_, out, err := app.LoadProfileOnce(ctx, org)
			return out, err
		},
		"transaction": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				tx, err := pool.Begin(ctx)
				if err != nil {
					return once.Outcome{}, err
				}
				if err := app.Approve(ctx, tx, org); err != nil {
					tx.Rollback(ctx)
					return once.Outcome{}, err
				}
				return ran(tx.Commit(ctx))
			}
			return app.ApproveOnce(ctx, pool, org)
		},
		"statement": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				return ran(app.Generate(ctx, org, day))
			}
			return app.GenerateOnce(ctx, pool, org, day)
		},
		"episode": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				return ran(app.Alert(ctx, "billing-api"))
			}
			return app.AlertOnce(ctx, pool, "billing-api")
		},
		"open": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				_, err := app.StartRun(ctx, org)
				return ran(err)
			}
			_, out, err := app.StartRunOnce(ctx, pool, org)
			return out, err
		},
		"forever": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				_, err := app.Welcome(ctx, 42)
				return ran(err)
			}
			_, out, err := app.WelcomeOnce(ctx, pool, 42)
			return out, err
		},
		"provider": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				return ran(app.Charge(ctx, "order-9"))
			}
			return app.ChargeOnce(ctx, "order-9")
		},
		"lease": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				return ran(app.Reconcile(ctx, "shard-1"))
			}
			return app.ReconcileOnce(ctx, pool, "shard-1")
		},
		"table-open": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				return inTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error { _, err := app.EnqueueJob(ctx, tx, "job-1"); return err })
			}
			_, out, err := app.EnqueueJobOnce(ctx, pool, "job-1")
			return out, err
		},
		"table-forever": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				return inTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error { return app.RecordCharge(ctx, tx, 7, nil) })
			}
			return app.RecordChargeOnce(ctx, pool, 7, nil)
		},
		"table-episode": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				return inTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error { return app.FireAlert(ctx, tx, "disk-full") })
			}
			return app.FireAlertOnce(ctx, pool, "disk-full")
		},
		"table-statement": func(ctx context.Context) (once.Outcome, error) {
			if *direct {
				return inTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error { _, err := app.UseQuota(ctx, tx, 7, day, 60); return err })
			}
			_, out, err := app.UseQuotaOnce(ctx, pool, 7, day, 60)
			return out, err
		},
	}
	counts := map[string]string{
		"request":       "SELECT count(*) FROM effects WHERE kind = 'request'",
		"transaction":   "SELECT count(*) FROM effects WHERE kind = 'transaction'",
		"statement":     "SELECT count(*) FROM effects WHERE kind = 'statement'",
		"episode":       "SELECT count(*) FROM effects WHERE kind = 'episode'",
		"open":          "SELECT count(*) FROM effects WHERE kind = 'open'",
		"forever":       "SELECT count(*) FROM effects WHERE kind = 'forever'",
		"lease":         "SELECT count(*) FROM effects WHERE kind = 'lease'",
		"table-open":    "SELECT count(*) FROM jobs WHERE dedupe_key = 'job-1'",
		"table-forever": "SELECT count(*) FROM billing.charges WHERE org_id = 7",
		"table-episode": "SELECT count(*) FROM alerts WHERE rule_id = 'disk-full'",
		// The units reserved, in calls of 60: the one row holds them all.
		"table-statement": "SELECT coalesce(sum(used), 0) / 60 FROM quota WHERE org_id = 7",
	}

	// Approve's window between its read and its write: with the guard, the lock must close
	// it however wide it is; without, every caller reads before any writes, so the control
	// races for sure.
	app.Gap = func() { time.Sleep(10 * time.Millisecond) }
	if *direct {
		var read atomic.Int64
		app.Gap = func() {
			read.Add(1)
			waitFor(func() bool { return read.Load() >= callers })
		}
	}

	results := map[string]Result{}
	for kind, call := range calls {
		var res Result
		var started, returned atomic.Int64
		app.Hold = nil
		if !*direct {
			// The winner stays inside its claim until every other caller has returned; a
			// request memo's other callers wait for the winner's call, so there it stays
			// until they have all made theirs.
			app.Hold = func() { waitFor(func() bool { return returned.Load() >= callers-1 }) }
			if kind == "request" {
				app.Hold = func() { waitFor(func() bool { return started.Load() >= callers }) }
			}
		}
		stormCtx := ctx
		if kind == "request" {
			stormCtx = once.WithRequestScope(ctx)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		var mu sync.Mutex
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				started.Add(1)
				out, err := call(stormCtx)
				mu.Lock()
				if out.Status == once.Ran {
					res.Ran++
				}
				if out.Status == once.InFlight && out.Holder != "" {
					res.Redirected++
				}
				// A call that did not run answers with its Outcome and a nil error.
				if err != nil {
					res.Errors++
					if res.FirstError == "" {
						res.FirstError = err.Error()
					}
				}
				mu.Unlock()
				returned.Add(1)
			}()
		}
		close(start)
		wg.Wait()
		if kind == "provider" {
			res.Effects = performed.Load()
		} else if err := pool.QueryRow(ctx, counts[kind]).Scan(&res.Effects); err != nil {
			fail(fmt.Errorf("%s: counting: %w", kind, err))
		}
		results[kind] = res
	}
	json.NewEncoder(os.Stdout).Encode(results)
}

// FirstResult is what one call taking n units of a fresh key's quota did.
type FirstResult struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Used is the units the key holds after the call.
	Used int64 `json:"used"`
}

func firstCall(ctx context.Context, pool *pgxpool.Pool, n int64) {
	const org, day = 8, "2026-12-01"
	_, out, err := app.UseQuotaOnce(ctx, pool, org, day, n)
	res := FirstResult{Status: out.Status.String()}
	if err != nil {
		res.Error = err.Error()
	}
	if err := pool.QueryRow(ctx, "SELECT coalesce(sum(used), 0) FROM quota WHERE org_id = $1 AND day = $2", org, day).Scan(&res.Used); err != nil {
		fail(fmt.Errorf("counting: %w", err))
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

// waitFor polls cond until it holds, for ten seconds at most: a storm that cannot meet
// stops waiting, and its counts say so.
// IntentCall is what one call of a CreateIntent guard got.
type IntentCall struct {
	Status string
	Intent app.Intent
	Error  string `json:",omitempty"`
}

// resultCalls calls each CreateIntent guard twice for order, and prints, per form, what the
// call that ran and the duplicate got.
func resultCalls(ctx context.Context, pool *pgxpool.Pool, order string) {
	guards := map[string]func(context.Context, once.DB, string) (app.Intent, once.Outcome, error){
		"sealed": app.CreateIntentSealedOnce, "redacted": app.CreateIntentRedactedOnce,
		"digest": app.CreateIntentDigestOnce, "none": app.CreateIntentNoneOnce, "plain": app.CreateIntentPlainOnce,
	}
	got := map[string][]IntentCall{}
	for form, call := range guards {
		for range 2 {
			v, out, err := call(ctx, pool, order)
			c := IntentCall{Status: out.Status.String(), Intent: v}
			if err != nil {
				c.Error = err.Error()
			}
			got[form] = append(got[form], c)
		}
	}
	json.NewEncoder(os.Stdout).Encode(got)
}

func waitFor(cond func() bool) {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

func ran(err error) (once.Outcome, error) {
	if err != nil {
		return once.Outcome{}, err
	}
	return once.Outcome{Status: once.Ran}, nil
}

func inTx(ctx context.Context, pool *pgxpool.Pool, fn func(context.Context, pgx.Tx) error) (once.Outcome, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return once.Outcome{}, err
	}
	if err := fn(ctx, tx); err != nil {
		tx.Rollback(ctx)
		return once.Outcome{}, err
	}
	return ran(tx.Commit(ctx))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "storm:", err)
	os.Exit(1)
}

// printProblems prints the problems a *onceschema.Error lists, one a line, as oncegen verify
// prints its own; any other error fails.
func printProblems(err error) {
	var schema *onceschema.Error
	if err != nil && !errors.As(err, &schema) {
		fail(err)
	}
	if schema != nil {
		for _, p := range schema.Problems {
			fmt.Println(p)
		}
	}
}
