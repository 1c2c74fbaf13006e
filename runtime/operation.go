package once

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultOperationRetain is how long an Operation remembers a reference when its Retain is
// zero: a day, the window in which clients retry (Stripe keeps its keys as long).
const DefaultOperationRetain = 24 * time.Hour

// MaxReferenceLen is the longest operation reference accepted, in bytes (Stripe's limit for
// idempotency keys).
const MaxReferenceLen = 255

// Operation is the promise a paid product makes at its front door: one customer intention,
// named by a reference the client keeps across its retries, is carried out once, however many
// times it arrives (a second click, another tab, a reconnecting phone, an integration's
// retry). It is a Forever guard whose keys are the client's references, scoped to the
// account that asks, so the same reference from two accounts is two operations and neither
// can see the other's.
//
// The account must come from authentication, never from the request body: a key a caller
// can point at another account's operation would replay that account's result to it.
//
// An operation is stored as a Forever guard's would be, with the account and the reference
// each encoded as a one-part key (EncodeKey): Ref{Scope: Key(account), Key: Key(reference)}.
// That is what a wrapper oncegen writes for //once:forever scope=account key=reference
// passes, so an Operation, the oncehttp middleware and a generated guard of the same name
// meet on the same row, and once.ledger and once.followups hold one scope per account
// however it was reached. Accounts and references without '/' or '%' are stored as they
// are.
type Operation[T any] struct {
	// Name names the operation ("reports.generate"); references are per Name and account.
	Name string
	// Retain is how long a settled operation's reference is remembered; zero means
	// DefaultOperationRetain. After it, a retry with the same reference runs as new work.
	Retain time.Duration
	// Stale, RepeatSafe, MaxResult, NoHeartbeat and Wait are as for Forever.
	Stale       time.Duration
	RepeatSafe  bool
	MaxResult   int
	NoHeartbeat bool
	Wait        time.Duration
}

// OperationRef is what names one intention of one account.
type OperationRef struct {
	// Account is the authenticated account (or workspace) the operation belongs to.
	Account string
	// Reference is the client's name for the intention: the same on every retry of it, a
	// new one for a deliberate new run (Regenerate). At most MaxReferenceLen bytes of
	// printable ASCII, and at most MaxKeyLen once encoded ('/' and '%' take three bytes).
	Reference string
	// Input is what the intention asks for (the request's parameters). It is fingerprinted:
	// the reference reused with a different input is refused with ErrMismatch. Nil skips the
	// check.
	Input any
}

// Do carries out the operation ref names, at most once: as Forever.DoRef, with fn given the
// attempt it runs under (for provider keys, ledger entries, follow-ups and checkpoints).
func (op Operation[T]) Do(ctx context.Context, db DB, ref OperationRef, fn func(context.Context, *Attempt) (T, error)) (T, Outcome, error) {
	var zero T
	stored, err := op.storedRef(ctx, db, ref)
	if err != nil {
		return zero, Outcome{}, err
	}
	var inner func(context.Context) (T, error)
	if fn != nil {
		inner = func(ctx context.Context) (T, error) {
			a, _ := AttemptFrom(ctx)
			return fn(ctx, a)
		}
	}
	return doCall(ctx, db, op.forever().call(kindOperation, stored, ref.Reference), inner)
}

// Lookup returns the record of the operation that account started under reference, for a
// status endpoint ("still running", "done, here is the result"). Another account's
// operation with the same reference is not found: ErrNoOperation.
func (op Operation[T]) Lookup(ctx context.Context, db DB, account, reference string) (OperationRecord, error) {
	stored, err := op.storedRef(ctx, db, OperationRef{Account: account, Reference: reference})
	if err != nil {
		return OperationRecord{}, err
	}
	return LookupOperation(ctx, db, op.Name, stored.Scope, stored.Key)
}

func (op Operation[T]) forever() Forever[T] {
	retain := op.Retain
	if retain == 0 {
		retain = DefaultOperationRetain
	}
	return Forever[T]{Name: op.Name, Retain: retain, Stale: op.Stale, RepeatSafe: op.RepeatSafe,
		MaxResult: op.MaxResult, NoHeartbeat: op.NoHeartbeat, Wait: op.Wait}
}

// storedRef checks the call and ref, and returns ref as stored: account and reference
// encoded as one-part keys.
func (op Operation[T]) storedRef(ctx context.Context, db DB, ref OperationRef) (Ref, error) {
	if err := checkName(op.Name); err != nil {
		return Ref{}, err
	}
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s %s: %s", ErrInvalid, kindOperation, op.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case ctx == nil:
		return Ref{}, invalid("nil context")
	case ctx.Err() != nil:
		return Ref{}, fmt.Errorf("%w: %s %s: context already ended: %w", ErrInvalid, kindOperation, op.Name, ctx.Err())
	case nilDB(db) != "":
		return Ref{}, invalid("%s", nilDB(db))
	case ref.Account == "":
		return Ref{}, invalid("empty account (an operation reference is always scoped to the authenticated account)")
	case ref.Reference == "":
		return Ref{}, invalid("empty reference")
	case len(ref.Reference) > MaxReferenceLen:
		return Ref{}, invalid("reference is %d bytes, over the %d-byte limit", len(ref.Reference), MaxReferenceLen)
	}
	for i := 0; i < len(ref.Reference); i++ {
		if c := ref.Reference[i]; c < ' ' || c > '~' {
			return Ref{}, invalid("reference holds byte %#x at %d: only printable ASCII is accepted", c, i)
		}
	}
	stored := Ref{Scope: Key(ref.Account), Key: Key(ref.Reference), Input: ref.Input}
	switch {
	case len(stored.Key) > MaxKeyLen:
		return Ref{}, invalid("reference is %d bytes once encoded ('/' and '%%' take three), over the %d-byte limit", len(stored.Key), MaxKeyLen)
	case len(stored.Scope) > MaxKeyLen:
		return Ref{}, invalid("account is %d bytes once encoded ('/' and '%%' take three), over the %d-byte limit", len(stored.Scope), MaxKeyLen)
	case !utf8.ValidString(ref.Account) || strings.ContainsRune(ref.Account, 0):
		return Ref{}, invalid("account is not valid UTF-8 text")
	}
	return stored, nil
}
