package once

import (
	"context"
	"errors"
	"sync"

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
// At most one read of a key is on its way at a time; the callers arriving meanwhile gather
// behind it, and the first of them sends theirs once it is answered. A storm on one key thus
// sends one read for each group of callers that arrived while the read before was on its
// way, instead of one read each. Reads are shared only on a pool (a transaction has a snapshot of its own, and a
// connection serves one caller at a time), per pool, guard, key and cap.
type sharedReads[R any] struct {
	mu     sync.Mutex
	latest map[sharedReadKey]*sharedRead[R]
}

type sharedReadKey struct {
	pool *pgxpool.Pool
	name string
	key  string
	cap  int64
}

// sharedRead is one read and the callers waiting for its answer.
type sharedRead[R any] struct {
	sent    bool          // guarded by sharedReads.mu: once set, nobody joins
	joiners int           // guarded by sharedReads.mu: callers waiting for it but its sender
	done    chan struct{} // closed when res and err are set
	res     R
	err     error
}

// joinSentReads lets a caller join a read already sent, whose snapshot may predate the
// call: the wrong rule, which tests turn on to show what the right one prevents.
var joinSentReads = false

// errReadAbandoned is the answer of a read whose sender's context ended before it was
// sent: its callers send reads of their own.
var errReadAbandoned = errors.New("shared read abandoned")

// read answers with send's result for k, sending it or joining a read of k not yet sent.
// An error of a read it joined (the sender's context, a broken connection) is not the
// caller's: it sends its own read then. Only the caller's own context ending while it
// waits is an error of its own.
func (s *sharedReads[R]) read(ctx context.Context, k sharedReadKey, send func(context.Context) (R, error)) (R, error) {
	s.mu.Lock()
	if s.latest == nil {
		s.latest = make(map[sharedReadKey]*sharedRead[R])
	}
	last := s.latest[k]
	if last != nil && (!last.sent || joinSentReads) {
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
	if last != nil {
		// A read of k is on its way: gather callers until it is answered.
		select {
		case <-last.done:
		case <-ctx.Done():
			s.finish(k, r, *new(R), errReadAbandoned)
			var zero R
			return zero, ctx.Err()
		}
	}
	s.mu.Lock()
	r.sent = true
	s.mu.Unlock()
	res, err := send(ctx)
	s.finish(k, r, res, err)
	return res, err
}

// finish records r's answer, wakes its callers and forgets r if no read of k came after it.
func (s *sharedReads[R]) finish(k sharedReadKey, r *sharedRead[R], res R, err error) {
	s.mu.Lock()
	r.sent = true
	if s.latest[k] == r {
		delete(s.latest, k)
	}
	s.mu.Unlock()
	r.res, r.err = res, err
	close(r.done)
}
