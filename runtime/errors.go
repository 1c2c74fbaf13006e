package once

import (
	"errors"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// Errors callers test with errors.Is. An error a guard returns wraps one of these, or is the
// error of the function it ran, or a database error (see the package doc's "Did not run").
var (
	// ErrInFlight: another holder's claim on the key is open. Outcome.Err returns it for a
	// call that did not run for that reason (Status InFlight); no guard returns it as its
	// error.
	ErrInFlight = errors.New("once: in flight")
	// ErrRefused: a counter's cap would be exceeded. Outcome.Err returns it for a Refused
	// call.
	ErrRefused = errors.New("once: refused: the cap is reached")
	// ErrBusy: another holder has the lease or the lock, and the call did not wait (or
	// waited as long as it was allowed). Outcome.Err returns it for a Busy call.
	ErrBusy = errors.New("once: busy")
	// ErrInvalid: an argument cannot be used (empty name or key, a key over MaxKeyLen, a
	// non-positive TTL, a negative count, a nil DB). Nothing was written.
	ErrInvalid = dbcall.ErrInvalid
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
	// ErrResultTooLarge: a function's result could not be recorded: encoded as JSON (and
	// sealed, with Forever.Seal), it was over its Forever guard's MaxResult, or it could not
	// be encoded, or Seal failed. The effect happened and is recorded done, without the
	// result (the row's error says why); later calls get this error instead of a replay.
	ErrResultTooLarge = errors.New("once: result not recorded")
	// ErrRetryable: the call failed for a reason that passes by itself (a serialization failure,
	// a deadlock, a lost connection, a server shutting down) and left no claim behind, so the
	// same call may be made again. An error matching it still matches the database error it
	// came from (errors.As with *pgconn.PgError).
	//
	// It is never set for the caller's own context ending (test context.Canceled and
	// context.DeadlineExceeded for that), nor for an outcome the function recorded (Terminal,
	// Uncertain).
	ErrRetryable = errors.New("once: retryable")
	// ErrConflict is what the function of a table= guard returns when its INSERT .. ON
	// CONFLICT .. RETURNING returned no row: another row holds the promise. Table.Do
	// answers it with Outcome{Status: OnConflict} and a nil error; it never reaches the
	// guard's caller. Return it with InsertConflict, or with Conflict to name the row.
	ErrConflict = errors.New("once: the insert's conflict clause let no row through")
	// ErrUnsupportedServer: the connected server accepts a guard's statements but does not
	// keep the mechanism its promise rests on (CockroachDB takes advisory-lock calls and
	// locks nothing). The guard refuses to run rather than let duplicates through.
	ErrUnsupportedServer = errors.New("once: the server does not honour the guard's mechanism")
)
