package once_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// The package doc's table of calls that did not run, one test per kind: the function did
// not run, the error is nil (or, for a replayed failure, that failure), Status says why,
// the Outcome names what the row says, and Outcome.Err turns the answer into the error a
// caller that must not go on without the effect returns.

// notRun checks one row of the table: out and err of a call whose function did not run.
func notRun(t *testing.T, out once.Outcome, err error, status once.Status, wantErr error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v, %v; want no error: the call did not fail", out.Status, err)
	}
	if out.Status != status || out.Ran() {
		t.Fatalf("status %v (ran %v), want %v", out.Status, out.Ran(), status)
	}
	if got := out.Err(); (wantErr == nil) != (got == nil) || (wantErr != nil && !errors.Is(got, wantErr)) {
		t.Fatalf("Outcome.Err() = %v, want %v", got, wantErr)
	}
}

// mustNotRun fails the test if a guard runs it.
func mustNotRun(t *testing.T) func(context.Context) error {
	return func(context.Context) error { t.Error("the function ran"); return nil }
}

func TestDidNotRun_Request(t *testing.T) {
	t.Parallel()
	ctx := once.WithRequestScope(context.Background())
	g := once.Request{Name: "user.Load"}
	failed := errors.New("the first call's own failure")
	if _, err := g.Do(ctx, "7", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	out, err := g.Do(ctx, "7", mustNotRun(t))
	notRun(t, out, err, once.Duplicate, nil)
	// A duplicate of a call that failed replays that failure: its error, with Duplicate.
	g.Do(ctx, "8", func(context.Context) error { return failed })
	if out, err := g.Do(ctx, "8", mustNotRun(t)); !errors.Is(err, failed) || out.Status != once.Duplicate {
		t.Fatalf("a duplicate of a failed call: %v, %v; want Duplicate with the first call's error", out.Status, err)
	}
}

func TestDidNotRun_Transaction(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	release := holdLock(t, pool, "sub.Sync", "cus_1")
	defer release()
	for _, g := range []once.Transaction{{Name: "sub.Sync", NoWait: true}, {Name: "sub.Sync", LockTimeout: 50 * time.Millisecond}} {
		out, err := g.Do(ctx, pool, "cus_1", func(context.Context, pgx.Tx) error { t.Error("the function ran"); return nil })
		notRun(t, out, err, once.Busy, once.ErrBusy)
		if out.LockID != once.LockID("sub.Sync", "cus_1") {
			t.Fatalf("LockID %d, want the key's lock", out.LockID)
		}
	}
}

func TestDidNotRun_Statement(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Statement{Name: "ideas.Generate", Cap: 2}
	if _, ok, err := g.Reserve(ctx, pool, "org/1", 2); err != nil || !ok {
		t.Fatalf("filling the cap: %v, %v", ok, err)
	}
	out, err := g.Do(ctx, pool, "org/1", 1, mustNotRun(t))
	notRun(t, out, err, once.Refused, once.ErrRefused)
	if out.Count != 2 {
		t.Fatalf("Count %d, want the 2 units that fill the cap", out.Count)
	}
}

func TestDidNotRun_Episode(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Episode{Name: "alerts.Credit"}
	if _, err := g.Do(ctx, pool, "serp", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	out, err := g.Do(ctx, pool, "serp", mustNotRun(t))
	notRun(t, out, err, once.Duplicate, nil)
}

func TestDidNotRun_Open(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Open{Name: "research.Start"}
	c, _, err := g.Claim(ctx, pool, "org/1")
	if err != nil || c == nil {
		t.Fatalf("the open claim: %v, %v", c, err)
	}
	out, err := g.Do(ctx, pool, "org/1", mustNotRun(t))
	notRun(t, out, err, once.InFlight, once.ErrInFlight)
	if want := strconv.FormatInt(c.ID, 10); out.Holder != want || out.Claim != "" {
		t.Fatalf("Holder %q, Claim %q; want the open claim %s, and no claim of this call's", out.Holder, out.Claim, want)
	}
}

func TestDidNotRun_Forever(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	ran, err := g.Do(ctx, pool, once.Ref{Key: "done"}, func(context.Context) error { return nil })
	if err != nil || ran.Status != once.Ran || ran.Claim == "" {
		t.Fatalf("the first call: %+v, %v", ran, err)
	}

	t.Run("done", func(t *testing.T) {
		out, err := g.Do(ctx, pool, once.Ref{Key: "done"}, mustNotRun(t))
		notRun(t, out, err, once.Duplicate, nil)
		if out.Holder != ran.Claim || out.Claim != "" {
			t.Fatalf("Holder %q, Claim %q; want the operation %s that ran", out.Holder, out.Claim, ran.Claim)
		}
	})

	t.Run("in flight", func(t *testing.T) {
		running, release := make(chan string), make(chan struct{})
		go g.Do(ctx, pool, once.Ref{Key: "running"}, func(ctx context.Context) error {
			a, _ := once.AttemptFrom(ctx)
			running <- a.ID()
			<-release
			return nil
		})
		holder := <-running
		defer close(release)
		out, err := g.Do(ctx, pool, once.Ref{Key: "running"}, mustNotRun(t))
		notRun(t, out, err, once.InFlight, once.ErrInFlight)
		if out.Holder != holder {
			t.Fatalf("Holder %q, want the running operation %s", out.Holder, holder)
		}
	})

	t.Run("a recorded failure", func(t *testing.T) {
		g.Do(ctx, pool, once.Ref{Key: "declined"}, func(context.Context) error { return once.Terminal(errors.New("card declined")) })
		out, err := g.Do(ctx, pool, once.Ref{Key: "declined"}, mustNotRun(t))
		var f *once.Failure
		if !errors.As(err, &f) || f.Message != "card declined" || out.Status != once.Duplicate || out.Err() != nil {
			t.Fatalf("%+v, %v; want Duplicate with the recorded failure as the error", out, err)
		}
	})
}

func TestDidNotRun_Provider(t *testing.T) {
	t.Parallel()
	g := once.Provider{Prefix: "fee"}
	runs := 0
	for range 2 {
		out, err := g.Do(context.Background(), "reply/1", func(context.Context) error { runs++; return nil })
		if err != nil || out.Status != once.Ran || out.Err() != nil {
			t.Fatalf("%+v, %v; want every call to run", out, err)
		}
	}
	if runs != 2 {
		t.Fatalf("%d runs of 2 calls: a provider guard runs every call, and the provider drops a repeat", runs)
	}
}

func TestDidNotRun_Lease(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Lease{Name: "ideas.Lock", TTL: time.Minute}
	held, _, err := g.Acquire(ctx, pool, "org/1")
	if err != nil || held == nil {
		t.Fatalf("the holder's lease: %v, %v", held, err)
	}
	for _, g := range []once.Lease{g, {Name: "ideas.Lock", TTL: time.Minute, Wait: 50 * time.Millisecond}} {
		out, err := g.Do(ctx, pool, "org/1", mustNotRun(t))
		notRun(t, out, err, once.Busy, once.ErrBusy)
	}
}

func TestDidNotRun_Table(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	exec(t, pool, `CREATE TABLE runs (org_id bigint NOT NULL, status text NOT NULL)`)
	exec(t, pool, `CREATE UNIQUE INDEX runs_org_id_once_open ON runs (org_id) WHERE status = 'running'`)
	g := once.Table{Name: "research.StartRun", OnConflict: once.InFlight}
	start := func(ctx context.Context, tx pgx.Tx) error {
		var org int64
		err := tx.QueryRow(ctx, `INSERT INTO runs (org_id, status) VALUES (7, 'running')
ON CONFLICT (org_id) WHERE status = 'running' DO NOTHING RETURNING org_id`).Scan(&org)
		if errors.Is(err, pgx.ErrNoRows) {
			return once.Conflict("run of org 7")
		}
		return err
	}
	if out, err := g.Do(ctx, pool, start); err != nil || out.Status != once.Ran {
		t.Fatalf("the first insert: %+v, %v", out, err)
	}
	out, err := g.Do(ctx, pool, start)
	notRun(t, out, err, once.InFlight, once.ErrInFlight)
	if out.Holder != "run of org 7" {
		t.Fatalf("Holder %q, want the handle the function gave Conflict", out.Holder)
	}
}
