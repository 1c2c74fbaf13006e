package once

import "strconv"

// Status says what a guarded call did.
type Status uint8

const (
	// Ran: this call held the promise and ran the function.
	Ran Status = iota + 1
	// Duplicate: the promise was already kept; the function did not run. Where a result was
	// recorded, the call returns it.
	Duplicate
	// InFlight: another holder's claim on the same key is open; Outcome.ID names it.
	InFlight
	// Refused: a counter's cap would be exceeded; nothing was reserved.
	Refused
	// Busy: another holder has the lease or lock and this call did not wait.
	Busy
)

var statusNames = [...]string{"", "ran", "duplicate", "in flight", "refused", "busy"}

// String returns the status in lower case, as it reads in logs.
func (s Status) String() string {
	if int(s) < len(statusNames) && s != 0 {
		return statusNames[s]
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Outcome says what happened to one guarded call, beyond its error.
type Outcome struct {
	Status Status
	// ID is the row of the claim the call ran under or ran into, for Open (once.open_claims)
	// and Forever or Operation (once.operations): for Ran, the claim this call holds; for
	// InFlight, the open claim a caller can redirect to; for Duplicate, the operation whose
	// outcome was replayed. Zero for the other kinds.
	ID int64
	// Firing is the number of the episode this call fired (once.latches.firings), for Episode.
	Firing int64
	// LockID is the advisory lock's number, LockID(Name, key), for Transaction.
	LockID int64
	// ProviderKey is the provider key the function was given, for Provider.
	ProviderKey string
	// Holder names the row that holds the promise when a Table guard's insert met it: the
	// handle its function gave Conflict.
	Holder string
	// Count is a counter's value after the call (statement): units used against the cap.
	Count int64
	// Fence is a lease's fencing number: it increases every time the lease changes hands.
	Fence int64
}

// Ran reports whether this call ran the function.
func (o Outcome) Ran() bool { return o.Status == Ran }
