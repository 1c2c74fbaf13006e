package once

import (
	"context"
	"math/rand/v2"
	"time"
)

// A duplicate that finds its key in flight can wait for the holder to settle (Forever.Wait,
// oncehttp's Config.Wait) instead of answering InFlight at once. It polls: it claims again
// after a pause, and the claim answers with the recorded outcome as soon as there is one (or
// runs the function, if the holder released the key). A poll is one round trip (a guard
// meeting duplicates reads the key's row first, a plain read) and takes no lock.
//
// Polling rather than LISTEN/NOTIFY: a listener needs a session of its own, held for the
// whole wait, which a pool of short transactions or a pooler in transaction mode does not
// give; and a NOTIFY in every settle would put a statement, and a lock every committing
// notifier shares, on the common path for the sake of the rare duplicate.

// Wait's pauses: the first is up to waitFirstPause, each next one up to twice the last, and
// none over waitMaxPause; each is drawn at random from the upper half of its bound, so a
// crowd of waiters that arrived together does not poll together.
const (
	waitFirstPause = 10 * time.Millisecond
	waitMaxPause   = 500 * time.Millisecond
)

// waitPause returns the pause before poll n (n ≥ 1): a random duration in [b/2, b), b being
// waitFirstPause·2^(n-1) capped at waitMaxPause.
func waitPause(n int) time.Duration {
	b := waitFirstPause
	for i := 1; i < n && b < waitMaxPause; i++ {
		b *= 2
	}
	b = min(b, waitMaxPause)
	return b/2 + rand.N(b/2)
}

// sleepCtx sleeps d, or less if ctx ends first, and reports whether it slept the whole d.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// claimWaiting is p.claim, then, while the key is in flight and p.wait has not run out,
// claims again after each waitPause.
func (p *foreverCall) claimWaiting(ctx context.Context, db DB) (*Attempt, *operationRow, error) {
	a, row, err := p.claim(ctx, db)
	if p.wait <= 0 {
		return a, row, err
	}
	deadline := time.Now().Add(p.wait)
	for n := 1; err == nil && a == nil && row.state == opOpen; n++ {
		pause := waitPause(n)
		if time.Now().Add(pause).After(deadline) || !sleepCtx(ctx, pause) {
			break // the caller's patience ran out: the key is still in flight
		}
		a, row, err = p.claim(ctx, db)
	}
	return a, row, err
}
