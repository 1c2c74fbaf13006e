package once_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

// These tests change the process's flush settings or read the counts held for the whole
// process, so none of them runs in parallel with another test.

// answeredBy is a tally of calls answered without running, by "kind name status".
type answeredBy map[string]int64

func (a answeredBy) add(kind, name string, out once.Outcome) {
	if out.Status.Answered() {
		a[kind+" "+name+" "+out.Status.String()]++
	}
}

// writtenAnswers reads once.duplicate_days as a tally.
func writtenAnswers(t *testing.T, db once.DB) answeredBy {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT kind || ' ' || name || ' ' || status, sum(answered)::bigint
FROM once.duplicate_days GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	got := answeredBy{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		got[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// mismatches lists where the written tally differs from the callers' own.
func mismatches(want, got answeredBy) []string {
	var out []string
	for k, n := range want {
		if got[k] != n {
			out = append(out, fmt.Sprintf("%s: written %d, answered %d", k, got[k], n))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: written %d, answered none", k, n))
		}
	}
	slices.Sort(out)
	return out
}

// stormAnswers fires two storms of stormSize callers on one key of every kind that answers
// without running, with FlushDuplicates called over and over beside the callers and once
// between the storms, and returns what the callers were answered. Every call is checked
// for the function running at most as its promise allows.
func stormAnswers(t *testing.T, pool *pgxpool.Pool) answeredBy {
	t.Helper()
	hold := func(context.Context) error { time.Sleep(20 * time.Millisecond); return nil }
	forever := once.Forever{Name: "dup.Charge"}
	open := once.Open{Name: "dup.Research"}
	episode := once.Episode{Name: "dup.Alert"}
	statement := once.Statement{Name: "dup.Generate", Cap: 3}
	lease := once.Lease{Name: "dup.Leader", TTL: time.Minute}
	transaction := once.Transaction{Name: "dup.Sync", NoWait: true}
	calls := []struct {
		kind, name string
		call       func(ctx context.Context) (once.Outcome, error)
	}{
		{"forever", forever.Name, func(ctx context.Context) (once.Outcome, error) {
			return forever.Do(ctx, pool, once.Ref{Key: "k"}, hold)
		}},
		{"open", open.Name, func(ctx context.Context) (once.Outcome, error) { return open.Do(ctx, pool, "k", hold) }},
		{"episode", episode.Name, func(ctx context.Context) (once.Outcome, error) { return episode.Do(ctx, pool, "k", hold) }},
		{"statement", statement.Name, func(ctx context.Context) (once.Outcome, error) {
			return statement.Do(ctx, pool, "k", 1, hold)
		}},
		{"lease", lease.Name, func(ctx context.Context) (once.Outcome, error) { return lease.Do(ctx, pool, "k", hold) }},
		{"transaction", transaction.Name, func(ctx context.Context) (once.Outcome, error) {
			return transaction.Do(ctx, pool, "k", func(context.Context, pgx.Tx) error { return hold(ctx) })
		}},
	}
	var mu sync.Mutex
	want := answeredBy{}
	ran := map[string]int{}
	ctx := context.Background()
	for round := range 2 {
		stop := make(chan struct{})
		flushed := make(chan error, 1)
		go func() {
			var err error
			for {
				select {
				case <-stop:
					flushed <- err
					return
				default:
				}
				err = errors.Join(err, once.FlushDuplicates(ctx, pool))
				time.Sleep(time.Millisecond)
			}
		}()
		together(t, stormSize*len(calls), func(ctx context.Context, caller int) error {
			c := calls[caller%len(calls)]
			out, err := c.call(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", c.kind, err)
			}
			mu.Lock()
			defer mu.Unlock()
			want.add(c.kind, c.name, out)
			if out.Ran() {
				ran[c.kind]++
			}
			return nil
		})
		close(stop)
		if err := <-flushed; err != nil {
			t.Fatalf("round %d: a flush beside the storm: %v", round, err)
		}
		if err := once.FlushDuplicates(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	// The promises held: the storm's duplicates are duplicates.
	if ran["forever"] != 1 || ran["episode"] != 1 || ran["statement"] != 3 {
		t.Fatalf("the functions ran %v times; want forever and episode once, statement three times", ran)
	}
	for _, c := range calls {
		if n := want[c.kind+" "+c.name+" "+map[string]string{"forever": "duplicate", "open": "in flight", "episode": "duplicate",
			"statement": "refused", "lease": "busy", "transaction": "busy"}[c.kind]]; n == 0 {
			t.Fatalf("%s: no call was answered without running: the storm proves nothing (%v)", c.kind, want)
		}
	}
	return want
}

// A storm of callers on one key of each kind: what once.duplicate_days holds afterwards is,
// per guard and status, exactly the number of callers that were answered without running,
// though writes ran beside the callers and between the storms.
func TestDuplicates_StormCountsEveryCallAnsweredWithoutRunning(t *testing.T) {
	pool := setup(t, stormConns)
	want := stormAnswers(t, pool)
	if m := mismatches(want, writtenAnswers(t, pool)); len(m) > 0 {
		t.Fatalf("the written counts are not the callers' answers:\n%s", strings.Join(m, "\n"))
	}
}

// The negative control: a write that sets each row to the count it carries, where it should
// add to it, loses the counts of every earlier write, and the storm's comparison says so.
func TestDuplicates_StormCatchesAWriteThatOverwrites(t *testing.T) {
	overwrite := strings.Replace(once.FlushDuplicatesSQL(), "answered = d.answered + excluded.answered", "answered = excluded.answered", 1)
	if overwrite == once.FlushDuplicatesSQL() {
		t.Fatal("the write's SQL no longer adds as this test expects: update the control")
	}
	defer once.SetDuplicateFlush(once.DuplicateFlushInterval, overwrite)()
	pool := setup(t, stormConns)
	want := stormAnswers(t, pool)
	if m := mismatches(want, writtenAnswers(t, pool)); len(m) == 0 {
		t.Fatal("a write that overwrites its rows went unnoticed")
	}
}

// A pool's counts are written by themselves, DuplicateFlushInterval after the first count,
// without FlushDuplicates.
func TestDuplicates_WrittenByATimer(t *testing.T) {
	defer once.SetDuplicateFlush(50*time.Millisecond, once.FlushDuplicatesSQL())()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Episode{Name: "dup.Timer"}
	want := answeredBy{}
	for range 5 {
		out, err := g.Do(ctx, pool, "k", func(context.Context) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		want.add("episode", g.Name, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := writtenAnswers(t, pool)
		if len(mismatches(want, got)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no timed write: written %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A write that fails (the table gone, here) fails no guard call: every call is answered as
// it would be, the timed writes fail beside them, FlushDuplicates reports the failure, and
// the counts are kept and written once the table is back.
func TestDuplicates_AFailingWriteFailsNoCall(t *testing.T) {
	restore := once.SetDuplicateFlush(10*time.Millisecond, once.FlushDuplicatesSQL())
	defer restore()
	pool := setup(t, 4)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `ALTER TABLE once.duplicate_days RENAME TO duplicate_days_away`); err != nil {
		t.Fatal(err)
	}
	g := once.Forever{Name: "dup.Away"}
	want := answeredBy{}
	for i := range 50 {
		out, err := g.Do(ctx, pool, once.Ref{Key: "k"}, func(context.Context) error { return nil })
		if err != nil || (i > 0) != (out.Status == once.Duplicate) {
			t.Fatalf("call %d with the table gone: %v, %v", i, out.Status, err)
		}
		want.add("forever", g.Name, out)
		time.Sleep(time.Millisecond) // let the timed writes fail meanwhile
	}
	// The timer's next retry comes 10 s from now; the one under way gives its counts back.
	restore()
	deadline := time.Now().Add(10 * time.Second)
	for once.DuplicateCounts().Pending < 49 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c := once.DuplicateCounts(); c.Pending < 49 {
		t.Fatalf("counts after the failed timed writes: %+v; want the 49 answers kept", c)
	}
	err := once.FlushDuplicates(ctx, pool)
	if err == nil || !strings.Contains(err.Error(), "duplicate_days") {
		t.Fatalf("FlushDuplicates with the table gone: %v; want the missing table named", err)
	}
	if c := once.DuplicateCounts(); c.Pending < 49 {
		t.Fatalf("counts after the failed flush: %+v; want the 49 answers kept", c)
	}
	if _, err := pool.Exec(ctx, `ALTER TABLE once.duplicate_days_away RENAME TO duplicate_days`); err != nil {
		t.Fatal(err)
	}
	if err := once.FlushDuplicates(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if m := mismatches(want, writtenAnswers(t, pool)); len(m) > 0 {
		t.Fatalf("after the table came back:\n%s", strings.Join(m, "\n"))
	}
}

// FlushDuplicates returns once the counts are written, even while a timed write has taken
// them (they are still pending meanwhile): it waits for that write, and writes what a
// failed one gave back. (At shutdown, a flush that returned with a timed write under way
// would lose its counts.)
func TestDuplicates_FlushWaitsForATimedWriteUnderWay(t *testing.T) {
	// A timed write that takes half a second and is then refused by PostgreSQL.
	const slow = `WITH s AS (SELECT pg_sleep(0.5)) SELECT 1 / (count(*) - 1) FROM s
WHERE cardinality($1::date[]) + cardinality($2::text[]) + cardinality($3::text[]) + cardinality($4::text[]) + cardinality($5::bigint[]) > 0`
	restore := once.SetDuplicateFlush(10*time.Millisecond, slow)
	defer restore()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "dup.UnderWay"}
	want := answeredBy{}
	before := once.DuplicateCounts().Pending
	for range 2 {
		out, err := g.Do(ctx, pool, once.Ref{Key: "k"}, func(context.Context) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		want.add("forever", g.Name, out)
	}
	underWay := func() (n int) {
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = $1`, slow).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); underWay() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no timed write under way")
		}
	}
	// The calls the write under way holds are still pending, not lost to a metric.
	if c := once.DuplicateCounts(); c.Pending < before+1 {
		t.Fatalf("counts while a timed write is under way: %+v; want the duplicate pending (%d before)", c, before)
	}
	restore() // the flush writes with the real statement
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := once.FlushDuplicates(short, pool); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a flush whose deadline passes while a timed write is under way: %v; want the deadline's error", err)
	}
	if err := once.FlushDuplicates(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if m := mismatches(want, writtenAnswers(t, pool)); len(m) > 0 {
		t.Fatalf("FlushDuplicates returned before the count was written:\n%s", strings.Join(m, "\n"))
	}
}

// Calls answered inside a transaction the caller holds are counted for the process and
// written by FlushDuplicates on any DB; on the in-memory stand-in nothing is counted.
func TestDuplicates_HeldForTransactionsWrittenByFlush(t *testing.T) {
	pool := setup(t, 4)
	ctx := context.Background()
	// Whatever earlier tests left held is written first, then forgotten.
	if err := once.FlushDuplicates(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `TRUNCATE once.duplicate_days`); err != nil {
		t.Fatal(err)
	}
	g := once.Episode{Name: "dup.InTx"}
	want := answeredBy{}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for range 4 {
			out, err := g.Do(ctx, tx, "k", func(context.Context) error { return nil })
			if err != nil {
				return err
			}
			want.add("episode", g.Name, out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := writtenAnswers(t, pool); len(got) != 0 {
		t.Fatalf("written before FlushDuplicates: %v", got)
	}
	if err := once.FlushDuplicates(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if m := mismatches(want, writtenAnswers(t, pool)); len(m) > 0 || want["episode dup.InTx duplicate"] != 3 {
		t.Fatalf("held answers %v:\n%s", want, strings.Join(m, "\n"))
	}
}
