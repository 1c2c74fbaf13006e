package once_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

// pollLog is a DB that records when each of its forever claims was sent: one waiter's polls.
type pollLog struct {
	*pgxpool.Pool
	mu    sync.Mutex
	polls []time.Time
}

func (l *pollLog) note(sql string) {
	if sql == once.ForeverReadSQL { // every poll of a key in flight reads its row once
		l.mu.Lock()
		l.polls = append(l.polls, time.Now())
		l.mu.Unlock()
	}
}

func (l *pollLog) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	l.note(sql)
	return l.Pool.QueryRow(ctx, sql, args...)
}

func (l *pollLog) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	l.note(sql)
	return l.Pool.Exec(ctx, sql, args...)
}

func (l *pollLog) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	for _, q := range b.QueuedQueries {
		l.note(q.SQL)
	}
	return l.Pool.SendBatch(ctx, b)
}

// The documented pauses between polls: the n-th (from 1) is at least half its bound, the
// bound starting at 10 ms and doubling to 500 ms.
func minPause(n int) time.Duration {
	b := 10 * time.Millisecond
	for i := 1; i < n && b < 500*time.Millisecond; i++ {
		b *= 2
	}
	return min(b, 500*time.Millisecond) / 2
}

// 100 duplicates of a forever key arrive while its first caller runs (for 300 ms): with
// Wait, each waits for the outcome instead of being answered in flight, and all 100 get the
// recorded result. One effect; no waiter polls faster than the documented backoff. The
// control, without Wait, is answered in flight at once.
func TestForever_WaitingDuplicatesGetTheRecordedResult(t *testing.T) {
	t.Parallel()
	const waiters = 100
	pool := setup(t, 20)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Render", Wait: 10 * time.Second}
	started := make(chan struct{})
	var runs atomic.Int32
	settled := make(chan time.Time, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		v, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "q3"}, func(ctx context.Context) (string, error) {
			runs.Add(1)
			close(started)
			time.Sleep(300 * time.Millisecond)
			return "report-17", effect(ctx, pool, "render", "q3", 0)
		})
		settled <- time.Now()
		if err != nil || out.Status != once.Ran || v != "report-17" {
			t.Errorf("first caller: %q, %+v, %v", v, out, err)
		}
	})
	<-started
	if _, out, err := once.ForeverValue(ctx, pool, (once.Forever{Name: "reports.Render"}), once.Ref{Key: "q3"}, func(context.Context) (string, error) {
		return "", errors.New("ran")
	}); err != nil || out.Status != once.InFlight {
		t.Fatalf("control without Wait: %+v, %v; want in flight", out, err)
	}
	logs := make([]*pollLog, waiters)
	results := make([]string, waiters)
	returned := make([]time.Time, waiters)
	for i := range waiters {
		logs[i] = &pollLog{Pool: pool}
		wg.Go(func() {
			v, out, err := once.ForeverValue(ctx, logs[i], g, once.Ref{Key: "q3"}, func(context.Context) (string, error) {
				runs.Add(1)
				return "again", nil
			})
			returned[i] = time.Now()
			if err != nil || out.Status != once.Duplicate {
				t.Errorf("waiter %d: %+v, %v; want the recorded result", i, out, err)
			}
			results[i] = v
		})
	}
	wg.Wait()
	settledAt := <-settled
	if n := runs.Load(); n != 1 {
		t.Fatalf("the function ran %d times, want once", n)
	}
	if n := effects(t, pool, "render", "q3"); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
	polls, late := 0, make([]time.Duration, 0, waiters)
	for i, l := range logs {
		if results[i] != "report-17" {
			t.Fatalf("waiter %d got %q, want the recorded report-17", i, results[i])
		}
		for n := 1; n < len(l.polls); n++ {
			if gap := l.polls[n].Sub(l.polls[n-1]); gap < minPause(n) {
				t.Fatalf("waiter %d polled again after %v (poll %d), under the documented %v", i, gap, n, minPause(n))
			}
		}
		polls += len(l.polls)
		late = append(late, returned[i].Sub(settledAt))
	}
	slices.Sort(late)
	t.Logf("%d waiters: %.1f claims each on average; answered a median %v (at most %v) after the first caller returned",
		waiters, float64(polls)/waiters, late[len(late)/2].Round(time.Millisecond), late[len(late)-1].Round(time.Millisecond))
}
