package once

import (
	"context"
	"errors"
	"sync"
	"time"
)

// heartbeatWhileRunning shows a running function's life with beat, every stale/3, for a
// claim judged stale after stale with no sign of life. It returns the function's context,
// cancelled with the cause if a beat finds the claim lost (ErrNotOwner), and a stop
// function, safe to call more than once, that returns when the heartbeat has stopped.
//
// The heartbeat starts only when the function outlives one interval (stale/3): until then a
// timer is all it costs, and a short function, the common case, sends no statement for it.
// It lasts as long as the function runs, not as long as the caller's context: a function
// still running after its caller gave up holds the claim all the same. beat must use a DB
// that several goroutines may use at once (a pool).
func heartbeatWhileRunning(ctx context.Context, stale time.Duration, beat func(context.Context) error) (context.Context, func()) {
	fctx, cancelFn := context.WithCancelCause(ctx)
	every := max(stale/3, time.Millisecond)
	var mu sync.Mutex
	stopped := false
	var cancelBeat context.CancelFunc
	var beating chan struct{} // closed when the heartbeat loop has returned
	start := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		var bctx context.Context
		bctx, cancelBeat = context.WithCancel(context.WithoutCancel(ctx))
		beating = make(chan struct{})
		go func() {
			defer close(beating)
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				// A failed heartbeat is tried again at the next tick: only a lost claim
				// stops it, and tells the function.
				if err := beat(bctx); errors.Is(err, ErrNotOwner) {
					cancelFn(err)
					return
				}
				select {
				case <-bctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	timer := time.AfterFunc(every, start)
	return fctx, func() {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		stopped = true
		cancel, done := cancelBeat, beating
		mu.Unlock()
		timer.Stop()
		if cancel != nil {
			cancel()
			<-done
		}
		cancelFn(context.Canceled)
	}
}
