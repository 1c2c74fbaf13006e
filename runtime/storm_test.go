package once_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// errBoom is a function's failure in the storms where work fails and is undone (refunded,
// rearmed).
var errBoom = errors.New("boom")

// pgErrCode returns the SQLSTATE of a PostgreSQL error, or "" for any other error.
func pgErrCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// stormSize is how many callers fire the same key at once in the race tests.
const stormSize = 64

// stormConns is the pool size for a storm: one connection per caller, plus one for the
// test's own reads.
const stormConns = stormSize + 1

// storm calls fire from n goroutines at once, each on its own pool connection: every
// goroutine first takes its connection, then all are released together by one barrier, so
// the calls overlap as much as the machine allows. Every error fire returns fails the test:
// a caller whose call failed proves nothing about duplicates.
func storm(t *testing.T, pool *pgxpool.Pool, n int, fire func(ctx context.Context, caller int, conn *pgxpool.Conn) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conns := make([]*pgxpool.Conn, n)
	for i := range conns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatalf("storm: acquiring connection %d of %d: %v", i+1, n, err)
		}
		defer c.Release()
		conns[i] = c
	}
	together(t, n, func(ctx context.Context, caller int) error { return fire(ctx, caller, conns[caller]) })
}

// together calls fire from n goroutines released at once by one barrier (storm without a
// connection of each caller's own: the callers share what they call through, a pool, say).
// Every error fire returns fails the test.
func together(t *testing.T, n int, fire func(ctx context.Context, caller int) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fire(ctx, i)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("storm: caller %d of %d: %v", i+1, n, err)
		}
	}
}

// barrier holds every one of n goroutines at wait until all n have arrived. The negative
// controls use it to hold the window between a check and the write it decides open until
// every caller has checked: the race then happens every time, not by luck.
type barrier struct {
	wg   sync.WaitGroup
	open chan struct{}
}

func newBarrier(n int) *barrier {
	b := &barrier{open: make(chan struct{})}
	b.wg.Add(n)
	go func() { b.wg.Wait(); close(b.open) }()
	return b
}

func (b *barrier) wait(ctx context.Context) error {
	b.wg.Done()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("barrier: %w", ctx.Err())
	}
}
