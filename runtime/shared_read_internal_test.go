package once

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A caller that gathers others behind a read on its way and whose context ends before it can
// send hands them nothing of its own: each sends its own read and gets its own answer, and the
// read on its way still answers its caller.
func TestSharedReads_AnAbandonedReadLeavesItsJoinersToReadThemselves(t *testing.T) {
	var s sharedReads[int]
	k := sharedReadKey{name: "g", key: "k", cap: 1}
	release, firstDone := readOnItsWay(&s, k)
	// The second caller gathers behind the first read, and its context will end.
	gctx, cancel := context.WithCancel(context.Background())
	gatherErr := make(chan error)
	go func() {
		_, err := s.read(gctx, k, func(context.Context) (int, error) { return 2, nil })
		gatherErr <- err
	}()
	gathering := gatheringRead(t, &s, k)
	// The third joins the gathering read.
	third := make(chan int)
	go func() {
		v, err := s.read(context.Background(), k, func(context.Context) (int, error) { return 3, nil })
		if err != nil {
			t.Error(err)
		}
		third <- v
	}()
	waitJoined(t, &s, gathering, 1)
	cancel()
	if err := <-gatherErr; !errors.Is(err, context.Canceled) {
		t.Errorf("the abandoning caller got %v, want its context's end", err)
	}
	if v := <-third; v != 3 {
		t.Errorf("the joiner of an abandoned read got %d, want the answer of its own read, 3", v)
	}
	close(release)
	if v := <-firstDone; v != 1 {
		t.Errorf("the first caller got %d, want 1", v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.latest) != 0 {
		t.Errorf("%d reads left behind", len(s.latest))
	}
}

// readOnItsWay sends a read of k that is answered 1 once release is closed, and returns when
// it is on its way; its caller's answer comes on answered.
func readOnItsWay(s *sharedReads[int], k sharedReadKey) (release chan struct{}, answered chan int) {
	release, answered = make(chan struct{}), make(chan int, 1)
	started := make(chan struct{})
	go func() {
		v, _ := s.read(context.Background(), k, func(context.Context) (int, error) {
			close(started)
			<-release
			return 1, nil
		})
		answered <- v
	}()
	<-started
	return release, answered
}

// gatheringRead waits for a read of k that gathers callers (not yet sent), and returns it.
func gatheringRead(t *testing.T, s *sharedReads[int], k sharedReadKey) *sharedRead[int] {
	t.Helper()
	return waitFor(t, s, func() *sharedRead[int] {
		if r := s.latest[k]; r != nil && !r.sent {
			return r
		}
		return nil
	})
}

// waitJoined waits until n callers have joined r.
func waitJoined(t *testing.T, s *sharedReads[int], r *sharedRead[int], n int) {
	t.Helper()
	waitFor(t, s, func() *sharedRead[int] {
		if r.joiners == n {
			return r
		}
		return nil
	})
}

// waitFor polls f under the reads' lock until it answers non-nil.
func waitFor(t *testing.T, s *sharedReads[int], f func() *sharedRead[int]) *sharedRead[int] {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		r := f()
		s.mu.Unlock()
		if r != nil {
			return r
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("timed out")
	return nil
}

// A read that hangs holds up the caller behind it for sharedReadPatience, no longer: the
// caller then sends its own.
func TestSharedReads_AHungReadHoldsUpTheCallerBehindItOnlyForAWhile(t *testing.T) {
	var s sharedReads[int]
	k := sharedReadKey{name: "g", key: "k", cap: 1}
	release, _ := readOnItsWay(&s, k)
	defer close(release)
	begun := time.Now()
	got := make(chan int)
	go func() {
		v, _ := s.read(context.Background(), k, func(context.Context) (int, error) { return 2, nil })
		got <- v
	}()
	select {
	case v := <-got:
		if v != 2 {
			t.Errorf("got %d, want its own read's 2", v)
		}
		if waited := time.Since(begun); waited < sharedReadPatience {
			t.Errorf("sent after %v, before the patience of %v ran out", waited, sharedReadPatience)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the caller behind a hung read is still waiting")
	}
}

// A read whose send panics leaves its key free and its joiners to read on their own.
func TestSharedReads_APanickingReadLeavesItsJoinersToReadThemselves(t *testing.T) {
	var s sharedReads[int]
	k := sharedReadKey{name: "g", key: "k", cap: 1}
	release, _ := readOnItsWay(&s, k)
	panicked := make(chan any)
	go func() {
		defer func() { panicked <- recover() }()
		s.read(context.Background(), k, func(context.Context) (int, error) { panic("send") })
	}()
	gathering := gatheringRead(t, &s, k)
	joined := make(chan int)
	go func() {
		v, _ := s.read(context.Background(), k, func(context.Context) (int, error) { return 3, nil })
		joined <- v
	}()
	waitJoined(t, &s, gathering, 1)
	close(release)
	if p := <-panicked; p != "send" {
		t.Errorf("the panic came back as %v", p)
	}
	select {
	case v := <-joined:
		if v != 3 {
			t.Errorf("the joiner got %d, want its own read's 3", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the joiner of a read whose send panicked is still waiting")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.latest) != 0 {
		t.Errorf("%d reads left behind", len(s.latest))
	}
}
