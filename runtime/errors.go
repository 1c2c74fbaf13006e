package once

import "errors"

// Errors callers test with errors.Is. Errors returned by this package wrap one of these, or
// the error of the function a guard ran, or a database error.
var (
	// ErrInvalid: an argument cannot be used (empty name or key, a key over MaxKeyLen, a
	// non-positive TTL, a negative count, a nil DB). Nothing was written.
	ErrInvalid = errors.New("once: invalid argument")
	// ErrBusy: another holder has the lease or lock, and the call was not asked to wait.
	ErrBusy = errors.New("once: busy")
	// ErrLockTimeout: a lock could not be had within the lock timeout.
	ErrLockTimeout = errors.New("once: lock timeout")
	// ErrInFlight: another holder's claim on the key is open.
	ErrInFlight = errors.New("once: in flight")
	// ErrMismatch: a key was reused with different input.
	ErrMismatch = errors.New("once: key reused with different input")
	// ErrNotOwner: a claim or lease is no longer this caller's (it expired, was taken over, was
	// closed as stale, or was released by force). Nothing was changed.
	ErrNotOwner = errors.New("once: not the owner")
	// ErrUncertain: an earlier attempt's outcome is unknown (its holder died, or the effect's
	// result was lost) and must be resolved by an operator before the key is used again.
	ErrUncertain = errors.New("once: outcome uncertain")
	// ErrNoRequestScope: a request-length guard ran with a context that has no request
	// scope (see WithRequestScope).
	ErrNoRequestScope = errors.New("once: no request scope in context")
)
