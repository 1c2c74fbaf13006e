package once

import (
	"fmt"
	"strconv"
)

// Status says what a guarded call did: it ran the function, or why it did not.
type Status uint8

const (
	// Ran: this call held the promise and ran the function.
	Ran Status = iota + 1
	// Duplicate: the promise was already kept (a request's memo, a forever key done, an
	// episode's latch set); the function did not run. Where a value was recorded, the
	// call returns it; where a failure was, the call returns it as its error.
	Duplicate
	// InFlight: another holder's claim on the key is open (an open claim, a forever claim
	// whose function is running); the function did not run. Outcome.Holder names the claim.
	InFlight
	// Refused: a counter's cap would be exceeded; nothing was reserved and the function did
	// not run.
	Refused
	// Busy: another holder has the lease or the lock, and this call did not wait for it (or
	// waited as long as it was allowed); the function did not run.
	Busy
)

// statuses is the one table of what each status is: its name, as logs and
// once.duplicate_days spell it, and whether a call with it was answered without running its
// function (and is counted so; see duplicates.go).
var statuses = [...]struct {
	name     string
	answered bool
}{
	Ran:       {"ran", false},
	Duplicate: {"duplicate", true},
	InFlight:  {"in flight", true},
	Refused:   {"refused", true},
	Busy:      {"busy", true},
}

// String returns the status in lower case, as it reads in logs.
func (s Status) String() string {
	if int(s) < len(statuses) && s != 0 {
		return statuses[s].name
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Answered reports whether a call with this status was answered without running its
// function: the promise was kept or held elsewhere (Duplicate, InFlight, Refused, Busy).
// Such calls are what once.duplicate_days counts.
func (s Status) Answered() bool { return int(s) < len(statuses) && statuses[s].answered }

// Outcome says what happened to one guarded call, beyond its error. Each field means one
// thing, and is set only by the kinds it names; the others leave it zero.
type Outcome struct {
	// Status says whether the function ran, and if not, why. It is zero only with an error
	// that came before the promise was reached (an invalid argument, a database error).
	Status Status
	// Claim is the row this call claimed and ran its function under, when it ran: the
	// operation's id in once.operations (Forever), the claim's id in once.open_claims, in
	// decimal (Open).
	Claim string
	// Holder is the row that holds the promise this call did not run under: the open
	// claim's id (Open, InFlight), the operation whose function is running or whose outcome
	// was replayed (Forever, InFlight or Duplicate), or the handle a table= guard's function
	// gave Conflict (Table).
	Holder string
	// Firing is the number of the episode this call fired (once.latches.firings), for
	// Episode.
	Firing int64
	// LockID is the advisory lock's number, LockID(Name, key), for Transaction.
	LockID int64
	// ProviderKey is the provider key the function was given, for Provider.
	ProviderKey string
	// Count is a Statement key's units used after the call: with this call's, when it ran;
	// the units that filled the cap, when it was refused.
	Count int64
	// Fence is the lease's fencing number, for Lease: it increases every time the lease
	// changes hands.
	Fence int64
}

// Ran reports whether this call ran the function.
func (o Outcome) Ran() bool { return o.Status == Ran }

// Err turns a call that did not run because the promise is held elsewhere into an error,
// for a caller that must not go on without the function's effect: ErrInFlight (naming the
// holder), ErrRefused or ErrBusy, matched with errors.Is. It is nil for a call that ran, and
// for a Duplicate: the promise was kept, and the call returned what was recorded.
//
//	out, err := SendWelcomeOnce(ctx, db, user)
//	if err == nil {
//		err = out.Err()
//	}
func (o Outcome) Err() error {
	switch o.Status {
	case InFlight:
		if o.Holder != "" {
			return fmt.Errorf("%w (held by %s)", ErrInFlight, o.Holder)
		}
		return ErrInFlight
	case Refused:
		return fmt.Errorf("%w (%d units used)", ErrRefused, o.Count)
	case Busy:
		return ErrBusy
	}
	return nil
}
