package once

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A storm of refusals on one key, in one process, asks the database the same question many
// times at once: is the key full? sharedReads lets callers that arrive together share one
// read. A caller joins a read only if that read has not been sent yet, so the read's
// snapshot is taken after the caller arrived and before it returns: its answer is as true
// for the caller as a read of its own would be, a moment during its call. A read that has
// been sent is never joined, since its snapshot may predate the caller (and a refund
// committed before the caller arrived).
//
// The callers arriving while a read of a key is on its way gather behind it, and the first of
// them sends theirs once it is answered, or once it has waited sharedReadPatience for it (a
// read that hangs, on a dead connection, holds up the callers after it no longer than that).
// A storm on one key thus sends one read for each group of callers that arrived while the
// read before was on its way, instead of one read each. A read that fails for its sender, or
// that its sender gave up before sending, is not shared: each caller that joined it sends
// its own. Reads are shared only on a pool (a transaction has a snapshot of its own, and a
// connection serves one caller at a time), per pool, guard, key and cap.
type sharedReads[R any] struct {
	mu     sync.Mutex
	latest map[sharedReadKey]*sharedRead[R]
}

// sharedReadKey names what a shared read answers: the mark of one guard's key, read on one
// pool, compared with one cap.
type sharedReadKey struct {
	pool *pgxpool.Pool
	name string
	key  string
	cap  int64
}

// sharedRead is one read and the callers waiting for its answer.
type sharedRead[R any] struct {
	sent    bool          // guarded by sharedReads.mu: once set, nobody joins
	joiners int           // guarded by sharedReads.mu: callers that joined it (its sender aside)
	done    chan struct{} // closed when res and err are set
	res     R
	err     error
}

// errReadAbandoned is the answer of a read whose sender's context ended before it was
// sent: its callers send reads of their own.
var errReadAbandoned = errors.New("shared read abandoned")

// sharedReadPatience is how long a caller waits for the read of its key on its way before it
// sends its own anyway: many times a read's usual answer, and short beside a caller's
// deadline.
const sharedReadPatience = 50 * time.Millisecond

// read answers with send's result for k, sending it or joining a read of k not yet sent.
// A read it joined that failed, or that was given up before it was sent, answers nothing: the
// caller sends its own read then and returns that read's answer or error. The caller's own
// context ending while it waits returns the context's error.
func (s *sharedReads[R]) read(ctx context.Context, k sharedReadKey, send func(context.Context) (R, error)) (R, error) {
	s.mu.Lock()
	if s.latest == nil {
		s.latest = make(map[sharedReadKey]*sharedRead[R])
	}
	last := s.latest[k]
	if last != nil && !last.sent {
		last.joiners++
		s.mu.Unlock()
		select {
		case <-last.done:
		case <-ctx.Done():
			var zero R
			return zero, ctx.Err()
		}
		if last.err == nil {
			return last.res, nil
		}
		return send(ctx)
	}
	r := &sharedRead[R]{done: make(chan struct{})}
	s.latest[k] = r
	s.mu.Unlock()
	finished := false
	defer func() {
		if !finished {
			// send panicked: the callers that joined r read on their own.
			s.finish(k, r, *new(R), errReadAbandoned)
		}
	}()
	if last != nil && !waitBehind(ctx, last.done) {
		// A read of k was on its way, and ctx ended while callers gathered behind it.
		finished = true
		s.finish(k, r, *new(R), errReadAbandoned)
		var zero R
		return zero, ctx.Err()
	}
	s.mu.Lock()
	r.sent = true
	s.mu.Unlock()
	res, err := send(ctx)
	finished = true
	s.finish(k, r, res, err)
	return res, err
}

// finish records r's answer, wakes its callers and forgets r if no read of k came after it.
func (s *sharedReads[R]) finish(k sharedReadKey, r *sharedRead[R], res R, err error) {
	s.mu.Lock()
	r.sent = true
	forgetLatest(s.latest, k, r)
	s.mu.Unlock()
	r.res, r.err = res, err
	close(r.done)
}

// waitBehind waits, while callers gather behind it, for the read or reservation on its way
// before (done) to be answered, or for sharedReadPatience, whichever comes first. It
// reports false if ctx ended first.
func waitBehind(ctx context.Context, done <-chan struct{}) bool {
	patience := time.NewTimer(sharedReadPatience)
	defer patience.Stop()
	select {
	case <-done:
	case <-patience.C:
	case <-ctx.Done():
		return false
	}
	return true
}

// forgetLatest removes k's entry from latest if it is still v: nothing of k came after v.
func forgetLatest[K, V comparable](latest map[K]V, k K, v V) {
	if latest[k] == v {
		delete(latest, k)
	}
}
