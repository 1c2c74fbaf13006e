// Package storm fires many calls at once, the way duplicates reach a server: n goroutines
// are started, wait until every one of them is running, and are released together.
//
// It also holds the other half of a deterministic race: a Barrier, at which the code under
// test waits between its check and its write, so that n racers have all checked before any
// of them writes. A storm alone makes a race likely; a storm held at a barrier makes it
// happen every time, so a test can count exact duplicates instead of "more than one, usually".
package storm

import (
	"sync"
	"testing"
	"time"
)

// Run calls fn(i) for each i in [0, n), each in a goroutine of its own. Every goroutine is
// started and waiting before any is released, so the calls overlap as much as the machine
// allows. Run returns when every call has returned.
func Run(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-release
			fn(i)
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
}

// Collect is Run for calls that return something: it returns each call's result at its
// index.
func Collect[T any](n int, fn func(i int) T) []T {
	out := make([]T, n)
	Run(n, func(i int) { out[i] = fn(i) })
	return out
}

// DefaultTimeout is how long a Barrier made by Hold waits for its callers: long enough for
// a loaded 2-core machine to bring every request of a storm to the check.
const DefaultTimeout = time.Minute

// Barrier holds callers until n of them have arrived, then lets them all go; callers after
// the n-th pass at once.
type Barrier struct {
	n       int
	timeout time.Duration
	mu      sync.Mutex
	arrived int
	open    chan struct{}
}

// NewBarrier returns a barrier for n callers. A caller waits at most timeout, so a test
// whose callers never all arrive fails instead of hanging.
func NewBarrier(n int, timeout time.Duration) *Barrier {
	return &Barrier{n: n, timeout: timeout, open: make(chan struct{})}
}

// Wait arrives at the barrier and waits until n callers have. It reports false if it gave
// up after the timeout.
func (b *Barrier) Wait() bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	timer := time.NewTimer(b.timeout)
	defer timer.Stop()
	select {
	case <-b.open:
		return true
	case <-timer.C:
		return false
	}
}

// Arrived returns how many callers have arrived.
func (b *Barrier) Arrived() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.arrived
}

// Hold returns a hook for the code under test (a BeforeInsert, an AfterCheck) that waits at
// a new barrier for n callers, DefaultTimeout at most, and fails t if they did not all come.
func Hold(t testing.TB, n int) func() {
	b := NewBarrier(n, DefaultTimeout)
	return func() {
		if !b.Wait() {
			t.Errorf("storm: only %d of %d callers reached the barrier within %s", b.Arrived(), n, DefaultTimeout)
		}
	}
}
