package once

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/oncekit/once/runtime/internal/ledger"
)

// Attempt is one run of a forever operation's function: the claim it holds, and what it
// will record when it settles. A Forever guard puts it in the function's context
// (AttemptFrom).
//
// The attempt gathers, while the function runs, the ledger entries (Record) and follow-ups
// (FollowUp) to write with the outcome, in the one statement that settles it; it records
// checkpoints (Checkpoint, Step) in the function's own transactions, and reads back those of
// an earlier attempt (Recovered). Its methods are safe for concurrent use.
type Attempt struct {
	db     DB
	call   *foreverCall
	id     string
	token  string
	number int
	// recoveryPoint is the last checkpoint an earlier attempt recorded ("" for none).
	recoveryPoint string

	mu          sync.Mutex
	uncertain   error
	ledger      []ledger.Row
	followups   []followUp
	checkpoints map[string]json.RawMessage // an earlier attempt's, loaded on first use
}

// AttemptFrom returns the attempt a Forever guard is running the function under, if ctx is
// that function's context or derived from it.
func AttemptFrom(ctx context.Context) (*Attempt, bool) {
	a, ok := ctx.Value(attemptKey).(*Attempt)
	return a, ok
}

// attemptContext is the context of a Forever guard's function: it carries the attempt, and
// stands for the operation's provider key (ProviderKeyFrom derives it from the attempt when
// asked), so that a call that never asks costs no key. One value for both keys, so that a
// provider key set around the guard's call is shadowed by the attempt's, and one set inside
// the function shadows it, as two context.WithValue would.
type attemptContext struct {
	context.Context
	a *Attempt
}

// Value returns the attempt for the attempt's and the provider key's context keys.
func (c attemptContext) Value(key any) any {
	if key == attemptKey || key == providerKeyKey {
		return c.a
	}
	return c.Context.Value(key)
}

// ID returns the operation's id in once.operations (a UUID): the same for every attempt at
// it, new for a key claimed again after its retention.
func (a *Attempt) ID() string { return a.id }

// Number returns which attempt this is: 1 for the first, more after a retryable failure or
// the takeover of a dead holder's claim.
func (a *Attempt) Number() int { return a.number }

// Name returns the guard's (the operation's) name.
func (a *Attempt) Name() string { return a.call.name }

// Scope returns the scope of the operation's key, as stored (Ref.Scope).
func (a *Attempt) Scope() string { return a.call.ref.Scope }

// Key returns the operation's key, as stored (Ref.Key).
func (a *Attempt) Key() string { return a.call.ref.Key }

// RecoveryPoint returns the last checkpoint an earlier attempt recorded, or "" when this
// attempt starts from the beginning.
func (a *Attempt) RecoveryPoint() string { return a.recoveryPoint }

// ProviderKey returns the idempotency key to send to a provider for one step of the
// operation: ProviderKey(step, the operation's id), an id drawn at random when the key was
// first claimed. Every attempt at the operation gets the same key for the same step, so a
// provider that dedupes does the work once however many attempts it takes; an operation
// claimed anew after its retention window gets new keys, as it is new work. Sent as an
// Idempotency-Key header through net/http, it makes the request one the Transport resends
// by itself after a broken connection (see the package doc).
func (a *Attempt) ProviderKey(step string) string { return ProviderKey(step, a.id) }

// Uncertain marks the attempt's outcome unknown, whatever the function then returns: the
// operation is recorded uncertain and listed for an operator. It is for code
// that cannot return an error, such as an HTTP handler that must still answer; a function
// that can, returns Uncertain(err). It reads the list with onceops.ListUncertain.
func (a *Attempt) Uncertain(reason error) {
	if reason == nil {
		reason = fmt.Errorf("marked uncertain")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.uncertain == nil {
		a.uncertain = reason
	}
}

func (a *Attempt) uncertainty() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.uncertain
}

// heartbeatWhileRunning arranges the attempt's automatic heartbeat (see Forever.NoHeartbeat)
// when its guard has one and its DB is a pool, which several goroutines may use at once, or
// the stand-in for one (see heartbeatWhileRunning, the function).
func (a *Attempt) heartbeatWhileRunning(ctx context.Context) (context.Context, func()) {
	if !a.call.heartbeat || !beatsByItself(a.db) {
		return ctx, func() {}
	}
	return heartbeatWhileRunning(ctx, a.call.stale, a.Heartbeat)
}
