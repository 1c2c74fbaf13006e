package once_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// A storm of reservations on one key through a pool: exactly the cap is reserved, and the
// refusals of the key marked full share their reads of the mark, so fewer reads are sent than
// refusals answered.
func TestStatement_StormOnAPoolSharesTheRefusalsReads(t *testing.T) {
	t.Parallel()
	var reads atomic.Int64
	pool := setupTracer(t, onStatement{once.FullSQL, func([]any) { reads.Add(1) }}, 8)
	const capacity, callers, attempts = 10, 16, 60
	g := once.Statement{Name: "shared.Generate", Cap: capacity}
	var reserved, refused atomic.Int64
	together(t, callers, func(ctx context.Context, _ int) error {
		for range attempts {
			_, ok, err := g.Reserve(ctx, pool, "org/1", 1)
			switch {
			case err != nil:
				return err
			case ok:
				reserved.Add(1)
			default:
				refused.Add(1)
			}
		}
		return nil
	})
	if n := reserved.Load(); n != capacity {
		t.Errorf("%d reservations made, want the cap, %d", n, capacity)
	}
	if used := counterUsed(t, pool, g.Name, "org/1"); used != capacity {
		t.Errorf("%d units held, want %d", used, capacity)
	}
	if n, r := reads.Load(), refused.Load(); n == 0 || 2*n > r {
		t.Errorf("%d reads of the full mark for %d refusals: want them shared, at most one read per two refusals", n, r)
	}
}

// A refusal shares only a read sent after its call began: a unit given back before the call
// is seen by it, while other callers' reads of the key, begun before the give-back, are still
// on their way. Four callers asking for two units each keep reads of the full key on their
// way (a key of cap 3 with one unit free still refuses them); each round gives one unit back,
// then asks for one unit, which must be reserved. The negative control runs the same rounds
// through a sharer of the test's own that joins a read already sent (the guard's statement,
// sent bare), whose snapshot can predate the give-back: some rounds are then refused a unit
// that was free before they began.
func TestStatement_ARefusalSharesOnlyReadsSentAfterItsCall(t *testing.T) {
	t.Parallel()
	stale := staleRefusals(t, "shared.Fresh", false, func(g once.Statement) reserveFunc { return g.Reserve })
	if stale != 0 {
		t.Errorf("%d rounds refused a unit given back before the call began", stale)
	}
}

func TestStatement_NegativeControl_JoiningASentReadRefusesAFreedUnit(t *testing.T) {
	t.Parallel()
	joining := func(g once.Statement) reserveFunc {
		var reads sentReads
		return func(ctx context.Context, db once.DB, key string, n int64) (int64, bool, error) {
			full, err := reads.full(ctx, db, g.Name, key, g.Cap)
			if err != nil || full {
				return g.Cap, false, err
			}
			return g.Reserve(ctx, db, key, n)
		}
	}
	if stale := staleRefusals(t, "shared.FreshWrong", true, joining); stale == 0 {
		t.Fatal("joining reads already sent refused no freed unit: the test cannot see the race it guards against")
	}
}

// reserveFunc is Statement.Reserve, or a stand-in for it.
type reserveFunc func(ctx context.Context, db once.DB, key string, n int64) (used int64, ok bool, err error)

// sentReads is the rule the runtime does not follow, written in the test: a caller joins the
// read of the key's full mark on its way, whenever it was sent.
type sentReads struct {
	mu  sync.Mutex
	cur *sentRead
}

type sentRead struct {
	done chan struct{}
	full bool
	err  error
}

// full answers whether the key is marked full, from the read on its way if there is one.
func (s *sentReads) full(ctx context.Context, db once.DB, name, key string, capacity int64) (bool, error) {
	s.mu.Lock()
	if r := s.cur; r != nil {
		s.mu.Unlock()
		<-r.done
		return r.full, r.err
	}
	r := &sentRead{done: make(chan struct{})}
	s.cur = r
	s.mu.Unlock()
	var markCap int64
	err := db.QueryRow(ctx, once.FullSQL, name, key, capacity).Scan(&markCap)
	r.full = err == nil
	if !errors.Is(err, pgx.ErrNoRows) {
		r.err = err
	}
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
	close(r.done)
	return r.full, r.err
}

// staleRefusals runs the rounds of the test above, each reservation through the reserve
// made for the guard, and returns how many were refused. With untilStale it stops at the
// first.
func staleRefusals(t *testing.T, name string, untilStale bool, reserveOf func(once.Statement) reserveFunc) int {
	t.Helper()
	ctx := context.Background()
	pool := setup(t, 6)
	const capacity, rounds = 3, 300
	g := once.Statement{Name: name, Cap: capacity}
	reserve := reserveOf(g)
	if _, ok, err := g.Reserve(ctx, pool, "org/1", capacity); err != nil || !ok {
		t.Fatalf("filling the key: %v, %v", ok, err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var asked atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				once.SetStatementRefusalShare(g.Name, 1)
				if _, ok, err := reserve(ctx, pool, "org/1", 2); err != nil || ok {
					t.Errorf("a reservation of 2 of a key holding at least 2 of 3: %v, %v", ok, err)
					return
				}
				asked.Add(1)
			}
		}()
	}
	stale := 0
	for range rounds {
		if err := g.Refund(ctx, pool, "org/1", 1); err != nil {
			t.Fatal(err)
		}
		once.SetStatementRefusalShare(g.Name, 1)
		used, ok, err := reserve(ctx, pool, "org/1", 1)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			stale++
			if untilStale {
				break
			}
			// Put the key back to full for the next round.
			if _, ok, err := g.Reserve(ctx, pool, "org/1", 1); err != nil || !ok {
				t.Fatalf("refilling after a stale refusal (count %d): %v, %v", used, ok, err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if asked.Load() == 0 {
		t.Fatal("the other callers asked nothing: no read was on its way")
	}
	if used := counterUsed(t, pool, g.Name, "org/1"); !untilStale && used != capacity {
		t.Errorf("%d units held at the end, want %d", used, capacity)
	}
	return stale
}

// holdFirstMarkRead holds the first read of a full mark until release is closed, as a read on
// a connection that died without a word would be held.
type holdFirstMarkRead struct {
	once             sync.Once
	started, release chan struct{}
}

func (h *holdFirstMarkRead) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if d.SQL == once.FullSQL {
		first := false
		h.once.Do(func() { first = true })
		if first {
			close(h.started)
			<-h.release
		}
	}
	return ctx
}
func (h *holdFirstMarkRead) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A read of the mark that hangs holds up the callers of the key after it only for a while:
// the next one sends its own read on another of the pool's connections and is answered
// within its deadline.
func TestStatement_AHungReadOfTheMarkHoldsUpTheNextCallerOnlyForAWhile(t *testing.T) {
	t.Parallel()
	hold := &holdFirstMarkRead{started: make(chan struct{}), release: make(chan struct{})}
	pool := setupTracer(t, hold, 4)
	defer close(hold.release)
	g := once.Statement{Name: "shared.Hung", Cap: 1}
	once.SetStatementRefusalShare(g.Name, 1)
	go g.Reserve(context.Background(), pool, "org/1", 1)
	<-hold.started
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, ok, err := g.Reserve(ctx, pool, "org/1", 1); err != nil || !ok {
		t.Errorf("behind a hung read: %v, %v; want the unit reserved", ok, err)
	}
}

// A read of the mark that fails for a transient reason (its server process terminated) is
// ErrRetryable on a pool, as on a connection.
func TestStatement_ATransientFailureOfTheSharedReadIsRetryable(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Statement{Name: "shared.Transient", Cap: 1}
	once.SetStatementRefusalShare(g.Name, 1)
	locker, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Rollback(ctx)
	if _, err := locker.Exec(ctx, "LOCK TABLE once.counter_full IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, _, err := g.Reserve(ctx, pool, "org/1", 1)
		errc <- err
	}()
	waitForLockWait(t, pool)
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND query = $1`, once.FullSQL); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, once.ErrRetryable) {
		t.Errorf("a read whose server process was terminated: %v; want ErrRetryable", err)
	}
}
