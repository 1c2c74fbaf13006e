package once

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// behindAnswered returns groups whose latest reservation of k is one made alone and already
// answered: the next caller of k goes in a group, sent at once.
func behindAnswered(k sharedReadKey) *reservationGroups {
	done := make(chan struct{})
	close(done)
	return &reservationGroups{latest: map[sharedReadKey]*reservationGroup{k: {sent: true, done: done}}}
}

// A member whose context ends as its group's answer comes back, an answer that says the
// members' slots may be left (the statement's outcome was not seen and its clean-up failed),
// hears so, whichever of the two it notices first. A reservation made alone is on its way
// (already answered), so each caller goes in a group; one core makes the member's wake-up and
// the sender's answer interleave in every order over the rounds.
func TestReservationGroups_AMemberLeavingAsItsGroupIsAnsweredHearsOfASlotLeft(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := range 20 {
		k := sharedReadKey{name: "group.Left", key: fmt.Sprint(i), cap: 1}
		s := behindAnswered(k)
		ctx, cancel := context.WithCancel(context.Background())
		gs := groupSend{
			send: func(context.Context, []string) (groupAnswer, error) {
				cancel() // the member's deadline passes as the answer comes back
				return groupAnswer{}, fmt.Errorf("connection lost: %w: the clean-up failed", errClaimLeft)
			},
			giveBack: func(context.Context, []string) error { return nil },
		}
		_, grouped, err := s.reserve(ctx, k, newToken(), gs, func() error { return errors.New("reserved alone") })
		if !grouped || !errors.Is(err, errClaimLeft) {
			t.Fatalf("round %d: grouped %v, %v; want it to say the slot may be left", i, grouped, err)
		}
	}
}

// The last member to leave a sent group cancels its statement, whose clean-up may fail: the
// member waits for that clean-up, as a reservation made alone does, and hears of a slot it
// could not withdraw, however long the clean-up took.
func TestReservationGroups_TheLastMemberToLeaveHearsItsGroupsCleanUp(t *testing.T) {
	k := sharedReadKey{name: "group.LastLeaver", key: "k", cap: 1}
	s := behindAnswered(k)
	sent := make(chan struct{})
	gs := groupSend{
		send: func(ctx context.Context, tokens []string) (groupAnswer, error) {
			close(sent)
			<-ctx.Done()                                   // waiting on a lock until the group's context ends
			time.Sleep(backendWait + 200*time.Millisecond) // the clean-up waits, terminates, and fails
			return groupAnswer{}, errors.Join(ctx.Err(), errClaimLeft)
		},
		giveBack: func(context.Context, []string) error { return nil },
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-sent; cancel() }()
	_, grouped, err := s.reserve(ctx, k, newToken(), gs, func() error { return errors.New("reserved alone") })
	if !grouped || !errors.Is(err, errClaimLeft) {
		t.Fatalf("grouped %v, %v; want it to hear that the clean-up failed, as a reservation made alone would", grouped, err)
	}
}

// A group whose statement panics (in a tracer, say) gives its members an error, withdraws
// their slots, and lets the next caller of the key reserve: the panic does not end the
// process from the group's goroutine.
func TestReservationGroups_APanickingGroupIsItsMembersError(t *testing.T) {
	k := sharedReadKey{name: "group.Panic", key: "k", cap: 1}
	s := behindAnswered(k)
	var withdrawn []string
	gs := groupSend{
		send:     func(context.Context, []string) (groupAnswer, error) { panic("a tracer panicked") },
		giveBack: func(_ context.Context, tokens []string) error { withdrawn = tokens; return nil },
	}
	token := newToken()
	_, grouped, err := s.reserve(context.Background(), k, token, gs, func() error { return errors.New("reserved alone") })
	if !grouped || err == nil {
		t.Fatalf("grouped %v, %v; want the panic as an error", grouped, err)
	}
	if len(withdrawn) != 1 || withdrawn[0] != token {
		t.Errorf("withdrew %v; want the member's token", withdrawn)
	}
	_, grouped, err = s.reserve(context.Background(), k, newToken(), gs, func() error { return nil })
	if grouped || err != nil {
		t.Errorf("the next caller: grouped %v, %v; want it to reserve alone", grouped, err)
	}
}

// A model of the database (slots held by token, under a cap) behind the real groups: twelve
// callers reserve one unit at a time, alone or in groups, with deadlines from nothing to 8 ms
// (one in ten 3 s); statements take up to 2 ms, lose their answer (and are withdrawn, as
// resolveClaim would), lose a picked slot, or wait on a lock past backendWait; most units are
// refunded. At the end, the slots held are exactly those whose callers were told
// "reserved", and no reservation is left registered.
func TestReservationGroups_ARandomModelHoldsOnlyWhatCallersWereTold(t *testing.T) {
	var mu sync.Mutex
	held := map[string]bool{}
	const capacity = 1000
	insert := func(tokens []string) (used int64, got map[string]bool) {
		mu.Lock()
		defer mu.Unlock()
		used = int64(len(held))
		got = map[string]bool{}
		n := used
		for _, tk := range tokens {
			if n < capacity && rand.IntN(10) > 0 { // one pick in ten was taken meanwhile
				held[tk] = true
				got[tk] = true
				n++
			}
		}
		return used, got
	}
	remove := func(tokens []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, tk := range tokens {
			delete(held, tk)
		}
	}
	pause := func(ctx context.Context) bool {
		select {
		case <-time.After(time.Duration(rand.IntN(2000)) * time.Microsecond):
			return true
		case <-ctx.Done():
			return false
		}
	}
	gs := groupSend{
		send: func(ctx context.Context, tokens []string) (groupAnswer, error) {
			if rand.IntN(50) == 0 { // waiting on a lock, past backendWait
				select {
				case <-time.After(backendWait + 200*time.Millisecond):
				case <-ctx.Done():
					return groupAnswer{}, ctx.Err()
				}
			}
			if !pause(ctx) {
				return groupAnswer{}, ctx.Err() // cut off before it ran
			}
			used, got := insert(tokens)
			if !pause(ctx) {
				remove(tokens) // ran, its answer lost: withdrawn by token
				return groupAnswer{}, ctx.Err()
			}
			return groupAnswer{used: used, reserved: got}, nil
		},
		giveBack: func(_ context.Context, tokens []string) error { remove(tokens); return nil },
	}
	var s reservationGroups
	k := sharedReadKey{name: "group.Model", key: "k", cap: capacity}
	var told sync.Map
	var reserved, refused, failed atomic.Int64
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			for range 150 {
				d := time.Duration(rand.IntN(8000)) * time.Microsecond
				if rand.IntN(10) == 0 {
					d = 3 * time.Second
				}
				ctx, cancel := context.WithTimeout(context.Background(), d)
				token := newToken()
				ok, err := false, error(nil)
				for range maxGroupRounds + 1 {
					var ans groupAnswer
					var grouped bool
					ans, grouped, err = s.reserve(ctx, k, token, gs, func() error {
						if !pause(ctx) {
							return ctx.Err()
						}
						_, got := insert([]string{token})
						if !pause(ctx) {
							remove([]string{token})
							return ctx.Err()
						}
						ok = got[token]
						return nil
					})
					if !grouped || err != nil || ans.used >= capacity {
						break
					}
					if ans.reserved[token] {
						ok = true
						break
					}
				}
				cancel()
				switch {
				case err != nil:
					failed.Add(1)
				case ok:
					reserved.Add(1)
					told.Store(token, true)
					if rand.IntN(10) > 0 {
						remove([]string{token})
						told.Delete(token)
					}
				default:
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	// A member that left a group stuck on a lock returned before its slot was given back.
	time.Sleep(2 * backendWait)
	mu.Lock()
	defer mu.Unlock()
	for tk := range held {
		if _, ok := told.Load(tk); !ok {
			t.Errorf("a slot held by %s, whose caller was not told of it", tk)
		}
	}
	told.Range(func(tk, _ any) bool {
		if !held[tk.(string)] {
			t.Errorf("the caller of %s was told of a slot not held", tk)
		}
		return true
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.latest) != 0 {
		t.Errorf("%d reservations left registered as on their way", len(s.latest))
	}
	t.Logf("%d reserved, %d refused, %d failed; %d slots held", reserved.Load(), refused.Load(), failed.Load(), len(held))
	if reserved.Load() == 0 || failed.Load() == 0 {
		t.Error("the model reserved nothing, or no deadline fired")
	}
}
