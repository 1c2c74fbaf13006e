package storm_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/storm"
)

// Every call of a storm is running before any returns: each waits at a barrier for all the
// others, which it passes only because they are all in flight together.
func TestRun_AllCallsAreInFlightTogether(t *testing.T) {
	t.Parallel()
	const n = 16
	b := storm.NewBarrier(n, 30*time.Second)
	var calls [n]atomic.Int32
	met := storm.Collect(n, func(i int) bool {
		calls[i].Add(1)
		return b.Wait()
	})
	for i := range n {
		if !met[i] {
			t.Errorf("call %d gave up waiting for the others", i)
		}
		if got := calls[i].Load(); got != 1 {
			t.Errorf("fn(%d) was called %d times, want 1", i, got)
		}
	}
}

// The negative control: calls made one after another do not meet at the barrier; the
// first waits alone until it gives up.
func TestBarrier_CallsOneAfterAnotherDoNotMeet(t *testing.T) {
	t.Parallel()
	b := storm.NewBarrier(2, 20*time.Millisecond)
	if b.Wait() {
		t.Fatal("the first of two calls made one after another passed a barrier for two")
	}
	if got := b.Arrived(); got != 1 {
		t.Fatalf("%d arrived, want 1", got)
	}
}

// A barrier holds its callers until the n-th arrives, then lets them go; later callers
// pass at once.
func TestBarrier_HoldsUntilTheNthArrives(t *testing.T) {
	t.Parallel()
	b := storm.NewBarrier(3, time.Minute)
	passed := make(chan bool, 2)
	for range 2 {
		go func() { passed <- b.Wait() }()
	}
	for b.Arrived() < 2 {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-passed:
		t.Fatal("a caller passed with 2 of 3 arrived")
	default:
	}
	if !b.Wait() {
		t.Fatal("the third caller was held")
	}
	for range 2 {
		if !<-passed {
			t.Fatal("a held caller gave up")
		}
	}
	if !b.Wait() {
		t.Fatal("a caller after the third was held")
	}
}

// Hold's hook holds n callers of the code under test together.
func TestHold_HoldsTheStormAtTheHook(t *testing.T) {
	t.Parallel()
	const n = 8
	hook := storm.Hold(t, n)
	var before, after atomic.Int32
	storm.Run(n, func(int) {
		before.Add(1)
		hook()
		if got := before.Load(); got != n {
			t.Errorf("a caller passed the hook with %d of %d arrived", got, n)
		}
		after.Add(1)
	})
	if got := after.Load(); got != n {
		t.Fatalf("%d callers passed, want %d", got, n)
	}
}
