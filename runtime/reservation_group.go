package once

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A storm of reservations of one key, in one process, is many one-slot inserts, each
// committed on its own: most of the storm's time goes in the commits of the reservations that
// succeed. reservationGroups gathers the one-unit reservations of a key that arrive together
// into one statement, which gives each of them a free slot of its own, as many as fit, and
// commits once.
//
// A caller that finds no reservation of its key on its way reserves alone, as it would
// without groups, but registered as on its way: the callers arriving meanwhile gather in a
// group behind it. The callers arriving while a group is on its way gather in the next one.
// A group is sent once the reservation or group before it is answered, or once it has waited
// sharedReadPatience for it. A key reserved by one caller at a time is thus reserved as
// before, and a storm on one key sends one reservation for each group of callers that arrived
// while the reservation before was on its way.
//
// A caller joins only a group that has not been sent (as with sharedReads), so the group's
// snapshot is taken during the call of every member. A member is refused only if the key was
// full in that snapshot (see groupReserveSQL); one left without a slot otherwise asks again.
// A member that got a slot is told the key's count with its group's slots in it.
//
// Each member's slot carries the member's own token, so its refund, or the give-back of a
// reservation its caller did not see, is the member's alone, as for a reservation made
// alone. The statement runs on a context of its own, which ends only when every member has
// left, so one member's cancellation does not cut off the others:
//
//   - a member whose context ends before the group is sent leaves it, holding nothing;
//   - a member whose context ends after the group was sent leaves it; the group gives its
//     slot back as soon as the statement is answered. The member waits for that for at most
//     backendWait, and then returns, its slot to be given back when the statement ends (a
//     failure of that give-back is then heard by nobody);
//   - a member whose context ends after the answer gives back the slot it got itself;
//   - when the last member leaves, the statement is cancelled, and, its answer unseen, every
//     member's token is looked for and withdrawn (see resolveClaim); that member waits for
//     this clean-up, as a reservation made alone does, and hears if it failed.
//
// The statement's context carries the values of the context of the caller that started the
// group (its tracing, say), and no deadline: the members' own deadlines end their waits. A
// panic while the group is sent is the members' error, and their slots are withdrawn, since
// nothing says whether the statement ran.
//
// A group's statement waits, as a reservation made alone would, for a transaction that is
// inserting a slot it picked; the members wait with it, and the groups after it wait for it
// only sharedReadPatience. Groups are formed only on a pool (a transaction or a single
// connection serves its caller alone), per pool, guard, key and cap.
type reservationGroups struct {
	mu     sync.Mutex
	latest map[sharedReadKey]*reservationGroup
}

// reservationGroup is one group statement and its members, or a reservation made alone,
// which is sent from the start, so that no caller joins it.
type reservationGroup struct {
	// Guarded by reservationGroups.mu:
	sent     bool            // once set, nobody joins
	tokens   []string        // the members' tokens: those that have not left, until sent
	waiting  int             // after sent: the members that have not left
	left     map[string]bool // after sent: the members that left before its answer
	answered bool            // its answer is set; the members that left after this give back their own slots

	ctx    context.Context // the statement's: ends once every member has left
	cancel context.CancelFunc
	done   chan struct{} // closed when ans, err and leftErr are set
	ans    groupAnswer
	err    error // the statement's
	// leftErr is the failure of the give-back of the slots of members that left after the
	// group was sent and before its answer: theirs alone to report.
	leftErr error
}

// groupAnswer is what a group's statement found and did.
type groupAnswer struct {
	used     int64           // the key's units in the statement's snapshot
	reserved map[string]bool // the members' tokens whose slots it inserted
}

// reservations gathers the one-unit reservations of a Statement guard's keys on pools.
var reservations reservationGroups

// groupSend is what a group needs of its guard: send sends the group's statement for tokens
// (and, when its outcome was not seen, withdraws the slots of them all); giveBack gives back
// the slots of tokens, the members that left.
type groupSend struct {
	send     func(ctx context.Context, tokens []string) (groupAnswer, error)
	giveBack func(ctx context.Context, tokens []string) error
}

// reserve reserves a unit of k under token. With no reservation of k on its way, it calls
// alone, registered as on its way, and returns alone's error with grouped false. Otherwise
// it joins the group of k not yet sent, or starts the next one, and returns the group's
// answer or its statement's error; or, if ctx ends first, ctx's error (see the top of this
// file for what becomes of the caller's slot, and leftError).
func (s *reservationGroups) reserve(ctx context.Context, k sharedReadKey, token string, gs groupSend, alone func() error) (ans groupAnswer, grouped bool, err error) {
	s.mu.Lock()
	if s.latest == nil {
		s.latest = make(map[sharedReadKey]*reservationGroup)
	}
	last := s.latest[k]
	if last == nil {
		g := &reservationGroup{sent: true, done: make(chan struct{})}
		s.latest[k] = g
		s.mu.Unlock()
		defer s.finishAlone(k, g) // even if alone panics: the group behind it must not wait on it
		return groupAnswer{}, false, alone()
	}
	ans, err = s.join(ctx, k, last, token, gs)
	return ans, true, err
}

// finishAlone ends a reservation made alone: the group behind it no longer waits for it.
func (s *reservationGroups) finishAlone(k sharedReadKey, g *reservationGroup) {
	s.mu.Lock()
	forgetLatest(s.latest, k, g)
	s.mu.Unlock()
	close(g.done)
}

// join joins the group of k not yet sent, or starts the next one, behind last; s.mu is held,
// and join releases it.
func (s *reservationGroups) join(ctx context.Context, k sharedReadKey, last *reservationGroup, token string, gs groupSend) (groupAnswer, error) {
	g := last
	if !last.sent {
		last.tokens = append(last.tokens, token)
		s.mu.Unlock()
	} else {
		gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		g = &reservationGroup{tokens: []string{token}, ctx: gctx, cancel: cancel, done: make(chan struct{})}
		s.latest[k] = g
		s.mu.Unlock()
		go s.run(k, g, last, gs)
	}
	select {
	case <-g.done:
		return g.ans, g.err
	case <-ctx.Done():
	}
	s.mu.Lock()
	switch {
	case !g.sent:
		for i, t := range g.tokens {
			if t == token {
				g.tokens = append(g.tokens[:i:i], g.tokens[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
		return groupAnswer{}, ctx.Err()
	case !g.answered:
		g.left[token] = true
		emptied := false
		if g.waiting--; g.waiting == 0 {
			g.cancel() // nobody is left to read the answer: see run for the clean-up
			emptied = true
		}
		s.mu.Unlock()
		if emptied {
			// This leave cancelled the statement and started its clean-up, which a
			// reservation made alone waits for too (bounded by cleanupTimeout): wait for it,
			// so that a failure of it (errClaimLeft) is heard.
			<-g.done
		} else {
			t := time.NewTimer(backendWait)
			defer t.Stop()
			select {
			case <-g.done:
			case <-t.C:
				// Still on its way (waiting on a lock): the group gives the slot back when it ends.
				return groupAnswer{}, fmt.Errorf("%w (its group's reservation is still on its way, and is to give back the unit it gets)", ctx.Err())
			}
		}
		return groupAnswer{}, leftError(ctx, g, token)
	}
	s.mu.Unlock()
	// Answered before this member left: it gives its slot back itself.
	<-g.done
	if g.err != nil || !g.ans.reserved[token] {
		return groupAnswer{}, leftError(ctx, g, token)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := gs.giveBack(cctx, []string{token}); err != nil {
		return groupAnswer{}, fmt.Errorf("%w: %w: %w", ctx.Err(), errClaimLeft, err)
	}
	return groupAnswer{}, ctx.Err()
}

// leftError is the error of a member that left g after it was sent, once g is answered:
// ctx's, with what may have kept the member's slot.
func leftError(ctx context.Context, g *reservationGroup, token string) error {
	switch {
	case errors.Is(g.err, errClaimLeft):
		// The statement's outcome was not seen, and its clean-up could not withdraw the
		// members' slots.
		return fmt.Errorf("%w: %w", ctx.Err(), g.err)
	case g.err == nil && g.ans.reserved[token] && g.leftErr != nil:
		return fmt.Errorf("%w: %w", ctx.Err(), g.leftErr)
	}
	return ctx.Err()
}

// run sends g once the group before it (last) is answered, or has been waited for
// sharedReadPatience, then gives back the slots of the members that left meanwhile.
func (s *reservationGroups) run(k sharedReadKey, g *reservationGroup, last *reservationGroup, gs groupSend) {
	defer g.cancel()
	if last != nil {
		waitBehind(context.Background(), last.done) // a member leaving does not cut the gathering short
	}
	s.mu.Lock()
	g.sent = true
	tokens := g.tokens
	g.waiting += len(tokens)
	g.left = make(map[string]bool)
	if len(tokens) == 0 {
		g.cancel() // every member left before it was sent
	}
	s.mu.Unlock()
	var ans groupAnswer
	var err error
	if len(tokens) > 0 {
		ans, err = sendRecovering(g.ctx, gs, tokens)
	}
	s.mu.Lock()
	g.answered = true
	forgetLatest(s.latest, k, g)
	var gone []string
	for t := range g.left {
		if err == nil && ans.reserved[t] {
			gone = append(gone, t)
		}
	}
	s.mu.Unlock()
	var leftErr error
	if len(gone) > 0 {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(g.ctx), cleanupTimeout)
		if gerr := gs.giveBack(cctx, gone); gerr != nil {
			leftErr = fmt.Errorf("%w: giving back the slots of members that left: %w", errClaimLeft, gerr)
		}
		cancel()
	}
	g.ans, g.err, g.leftErr = ans, err, leftErr
	close(g.done)
}

// sendRecovering sends a group's statement, turning a panic into the members' error: a
// panic here would otherwise end the process, far from any caller's recover. The statement
// may have run, so its slots are withdrawn.
func sendRecovering(ctx context.Context, gs groupSend, tokens []string) (ans groupAnswer, err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err = fmt.Errorf("once: a group's reservation panicked: %v", r)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if gerr := gs.giveBack(cctx, tokens); gerr != nil {
			err = fmt.Errorf("%w: %w: withdrawing its members' slots: %w", err, errClaimLeft, gerr)
		}
		ans = groupAnswer{}
	}()
	return gs.send(ctx, tokens)
}
