package once

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// A member whose context ends as its group's answer comes back, an answer that says the
// members' slots may be left (the statement's outcome was not seen and its clean-up failed),
// hears so, whichever of the two it notices first. A reservation made alone is on its way
// (already answered), so each caller goes in a group; one core makes the member's wake-up and
// the sender's answer interleave in every order over the rounds.
func TestReservationGroups_AMemberLeavingAsItsGroupIsAnsweredHearsOfASlotLeft(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := range 20 {
		var s reservationGroups
		k := sharedReadKey{name: "group.Left", key: fmt.Sprint(i), cap: 1}
		done := make(chan struct{})
		close(done)
		s.latest = map[sharedReadKey]*reservationGroup{k: {lone: true, sent: true, done: done}}
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
