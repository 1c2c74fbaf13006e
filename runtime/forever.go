package once

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultMaxResult is the largest result, in bytes of JSON, a Forever guard records when its
// MaxResult is zero. A recorded result is a receipt (an id, a status, a small summary), not
// the work product: a report or an image belongs in the application's own table, and the
// result names it.
const DefaultMaxResult = 64 << 10

// foreverRounds bounds the claim loop. Each extra round follows a row that changed between
// the insert and the read (settled, taken over, expired and deleted); more than a few in a
// row means something keeps changing the key as fast as it is claimed.
const foreverRounds = 8

// Forever is the longest promise: once for ever, or for Retain. The first call of a key
// claims it and runs the function; the outcome is recorded, and every later call of the key
// gets the recorded outcome without running anything: the result (decoded into T through
// encoding/json) for a success, the error for a terminal failure.
//
// Claims live in once.operations, one row per Name, scope and key, whose state an operator
// can read: open, done, failed, released (a retryable failure: the next call runs again) or
// uncertain (the effect may or may not have happened: never run again until resolved, see
// ListUncertain).
//
// How the function's error is recorded is the function's choice:
//
//   - nil: done, the result is recorded and replayed;
//   - Terminal(err): failed, err's text is recorded and replayed as a *Failure;
//   - Uncertain(err), or Attempt.Uncertain: uncertain, listed for an operator;
//   - Rejected(err): nothing is recorded, the key is left unused (the input was refused
//     before any work);
//   - any other error: retryable, the claim is released and the next call runs again.
//
// A holder that dies leaves its claim open. Once it has shown no life for Stale (a claim, a
// checkpoint, a heartbeat), the next call marks it uncertain, or, when RepeatSafe says a
// repeat is harmless (its effect carries a provider idempotency key, or it resumes from
// checkpoints), claims it again and runs.
type Forever[T any] struct {
	// Name identifies the guard; claims are per Name, scope and key.
	Name string
	// Retain is how long a settled outcome is kept. Zero keeps it for ever. After it the key
	// is forgotten: a late retry runs as new work, and ReapExpired deletes the row.
	Retain time.Duration
	// Stale is how long an open claim may show no life (a claim, a checkpoint or a
	// heartbeat) before its holder is taken to be dead. Zero means DefaultHeartbeatStale
	// (45 s) when the call's DB is a *pgxpool.Pool and the heartbeat is on, and DefaultStale
	// (20 min) otherwise, where nothing shows a long function's life by itself. The window
	// is judged by the caller that finds the claim, so every caller of a guard should use
	// the same one: a guard also called on a single connection or with NoHeartbeat should
	// set Stale.
	Stale time.Duration
	// RepeatSafe says a dead holder's claim may be run again: the effect carries a provider
	// idempotency key (Attempt.ProviderKey), or its steps are checkpointed. Without it such a
	// claim is marked uncertain.
	RepeatSafe bool
	// MaxResult is the most bytes of JSON result recorded; zero means DefaultMaxResult.
	MaxResult int
	// NoHeartbeat turns the automatic heartbeat off. By default, when the call's DB is a
	// *pgxpool.Pool, a function still running after Stale/3 (15 s by default) starts showing
	// the attempt's life every Stale/3, on a connection of its own from the pool, until it
	// returns; a function that returns sooner, as most do, costs no statement. So a dead
	// holder is noticed within Stale of its last sign of life (45 s by default), and a
	// living one, however long it runs, is not taken for dead. If a heartbeat finds the claim
	// lost (it was taken over or marked uncertain after the heartbeats could not reach the
	// database for Stale), the function's context is cancelled with a cause wrapping
	// ErrNotOwner.
	//
	// On a pgx.Tx or a *pgx.Conn, which two goroutines cannot use at once, there is no
	// automatic heartbeat. Inside a transaction none is needed: the claim is not visible
	// until the transaction commits, and other callers of the key wait for it rather than
	// judge it stale. On a single connection, call Attempt.Heartbeat between steps.
	NoHeartbeat bool
	// Wait is how long a call that finds its key in flight (another caller is running the
	// function) waits for that caller to settle, and then answers as a duplicate does, with
	// the recorded outcome; if the holder released the key meanwhile, the waiting call runs
	// the function itself. It stops waiting when ctx ends. Zero does not wait: the call
	// returns ErrInFlight at once. While it waits it polls, with pauses of 5-10 ms, then
	// 10-20 ms, doubling up to 250-500 ms, each drawn at random (see wait.go for why polling).
	Wait time.Duration
}

// DefaultHeartbeatStale is a Forever guard's stale window when its Stale is zero and a
// heartbeat shows a long function's life (see Forever.NoHeartbeat): three heartbeats.
const DefaultHeartbeatStale = 45 * time.Second

// Ref names one forever operation: a key, in a scope, optionally with the input it stands
// for. Scope and Key are stored as they are given, and are meant to be key text, as
// Key writes it: generated wrappers pass Key of their scope= and key=
// expressions, and Operation and oncehttp store MustKey(account) and MustKey(reference). A call by
// hand that should meet those encodes the same way.
type Ref struct {
	// Scope is the tenant or account the key belongs to ("" for none). The same key in two
	// scopes is two operations, and neither can read the other's outcome.
	Scope string
	// Key names the operation within the guard and scope.
	Key string
	// Input, when non-nil, is fingerprinted (see Fingerprint) and stored with the claim; a
	// later call of the key with a different input is refused with ErrMismatch.
	Input any
}

// Failure is a terminal failure recorded by a Forever guard (see Terminal), as replayed to
// every later call of the same key.
type Failure struct {
	// Name is the guard's name.
	Name string
	// ID is the operation's id.
	ID int64
	// Message is the text of the error the function returned, as stored: NUL bytes dropped,
	// invalid UTF-8 replaced, and cut at 2000 bytes.
	Message string
}

// Error returns the recorded message with the guard it came from.
func (f *Failure) Error() string {
	return fmt.Sprintf("once: %s (operation %d) failed earlier: %s", f.Name, f.ID, f.Message)
}

// ErrResultTooLarge: a function's result, encoded as JSON, was over its guard's MaxResult. The
// effect happened and is recorded done, without the result; later calls get this error
// instead of a replay.
var ErrResultTooLarge = errors.New("once: result too large to record")

// Terminal marks err as a terminal failure: a Forever guard records it, and every later call
// of the key gets it back (as a *Failure) without running anything. Use it for failures a
// retry cannot change: a declined card, an input the provider refuses. Terminal(nil) is nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return terminalError{err}
}

// Rejected marks err as a refusal of the call's input before anything was done (the input
// failed validation, the caller lacks a permission): a Forever guard records nothing, and
// the key is left as if it had never been used, so a corrected call with the same key, and
// its new input, runs as new work. This is how Stripe treats a request that failed
// validation: no result is saved, because nothing began.
//
// It is only for failures before any effect. The claim is withdrawn (its row deleted) only
// on the key's first attempt with no checkpoint recorded; after an earlier attempt that may
// have done part of the work (a retryable failure, a dead holder's claim), or after a
// checkpoint, the claim is released instead, as for a retryable failure, and keeps its
// input. Ledger entries and follow-ups are not written. Rejected(nil) is nil.
func Rejected(err error) error {
	if err == nil {
		return nil
	}
	return rejectedError{err}
}

// Uncertain marks err as an unknown outcome: the effect may or may not have happened (the
// provider accepted the request, then the connection failed, and the provider cannot
// dedupe). A Forever guard records the operation uncertain and refuses it (ErrUncertain)
// until an operator resolves it. The returned error matches ErrUncertain with errors.Is.
// Uncertain(nil) is nil.
func Uncertain(err error) error {
	if err == nil {
		return nil
	}
	return uncertainError{err}
}

type terminalError struct{ err error }

func (e terminalError) Error() string { return e.err.Error() }
func (e terminalError) Unwrap() error { return e.err }

type rejectedError struct{ err error }

func (e rejectedError) Error() string { return e.err.Error() }
func (e rejectedError) Unwrap() error { return e.err }

type uncertainError struct{ err error }

func (e uncertainError) Error() string        { return e.err.Error() }
func (e uncertainError) Unwrap() error        { return e.err }
func (e uncertainError) Is(target error) bool { return target == ErrUncertain }

// Operation states, as stored in once.operations.state.
const (
	opOpen      = "open"
	opDone      = "done"
	opFailed    = "failed"
	opReleased  = "released"
	opUncertain = "uncertain"
	// opWithdrawn is not stored: a withdrawn claim's row is deleted (see Rejected).
	opWithdrawn = "withdrawn"
)

// The claim is the insert: ON CONFLICT DO NOTHING leaves an existing row alone, and the
// missing RETURNING row is how a duplicate is told. It is answered by a second, separate
// SELECT (foreverReadSQL). Neither shortcut is taken: a no-op DO UPDATE would lock and
// rewrite the winner's row for every duplicate (an order of magnitude slower under a storm),
// and a one-statement CTE that inserts or else selects reads with a snapshot taken before
// the winner committed, so under READ COMMITTED some duplicates would see no row at all.
//
// The claim sends the operation's provider reference ($6, see newProviderRef): drawn in the
// process, it costs the server no draw and the claim no RETURNING of it.
const foreverClaimSQL = `INSERT INTO once.operations (name, scope, key, token, fingerprint, provider_ref)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (name, scope, key) DO NOTHING
RETURNING id`

// foreverReadSQL reads the row a claim ran into. Staleness and expiry are judged by the
// database's clock, which every process shares.
//
// A guard meeting duplicates sends it pipelined with every claim (see insertOrRead), so on a
// fresh key it runs after an insert that succeeded, and finds the claimer's own row: the
// token condition makes it return nothing then, rather than a row that is encoded, sent and
// dropped. It reads only
// what a duplicate is answered from; a takeover gets the rest from its own RETURNING.
const foreverReadSQL = `SELECT id, state, token, attempts, fingerprint, result, error,
	state = 'open' AND alive_at < clock_timestamp() - $4::bigint * interval '1 microsecond',
	expires_at IS NOT NULL AND expires_at <= clock_timestamp()
FROM once.operations WHERE name = $1 AND scope = $2 AND key = $3 AND token <> $5`

// foreverTakeoverSQL gives a released claim, or (for a repeat-safe guard) a stale open one,
// to a new attempt. It is conditional on the token read, so of two callers taking over the
// same row only one succeeds; the other reads again.
const foreverTakeoverSQL = `UPDATE once.operations SET state = 'open', token = $3, attempts = attempts + 1,
	claimed_at = clock_timestamp(), alive_at = clock_timestamp(), settled_at = NULL, expires_at = NULL,
	result = NULL, error = NULL, fingerprint = coalesce(fingerprint, $4)
WHERE id = $1 AND token = $2 AND (state = 'released' OR ($5::bool AND state = 'open'
	AND alive_at < clock_timestamp() - $6::bigint * interval '1 microsecond'))
RETURNING attempts, provider_ref::text, coalesce(recovery_point, '')`

// foreverAbandonSQL marks a stale open claim uncertain: its holder stopped showing life, and
// nothing says whether its effect happened.
const foreverAbandonSQL = `UPDATE once.operations SET state = 'uncertain', settled_at = statement_timestamp(),
	uncertain_since = statement_timestamp(), error = $3, retain = $5::bigint * interval '1 microsecond'
WHERE id = $1 AND token = $2 AND state = 'open'
	AND alive_at < clock_timestamp() - $4::bigint * interval '1 microsecond'`

// foreverForgetSQL deletes an expired row so the key can be claimed as new work (with a new
// id, so its ledger entries and follow-ups are its own), and with it the follow-ups it
// enqueued that are delivered (see reapSQL).
const foreverForgetSQL = `WITH op AS (
	DELETE FROM once.operations
	WHERE id = $1 AND token = $2 AND expires_at IS NOT NULL AND expires_at <= clock_timestamp()
	RETURNING id
)
DELETE FROM once.followups f USING op WHERE f.operation_id = op.id AND f.state = 'delivered'`

// foreverWithdrawSQL deletes a rejected attempt's claim (see Rejected), only while it is the
// key's first attempt and has recorded no checkpoint: then nothing of the operation can
// exist beyond its row.
const foreverWithdrawSQL = `DELETE FROM once.operations
WHERE id = $1 AND token = $2 AND state = 'open' AND attempts = 1 AND recovery_point IS NULL`

// foreverSettleSQL records an attempt's outcome. It is conditional on the attempt's token;
// an uncertain row is accepted too, because a holder that was marked uncertain for showing
// no life, and then returned, knows the outcome the mark was guessing at. The clock is read
// once, as statement_timestamp() (see clock.go), so a settled outcome expires exactly Retain
// after settled_at. The retention is recorded in every state, so an uncertain operation
// resolved later is kept as long.
//
// The settle of an open claim is a HOT update when the guard keeps outcomes for ever: no
// index reads a column it changes (an operator's list of uncertain operations is indexed on
// uncertain_since, which stays NULL from open to done, not on state), and the table leaves
// room in each page for the new row version (its fillfactor), so PostgreSQL writes the new
// version beside the old one and no index entry at all. A guard with a Retain sets
// expires_at, which the reaper's index reads, and pays its index entry.
const foreverSettleSQL = `UPDATE once.operations SET state = $3, result = $4, error = $5,
	settled_at = statement_timestamp(), alive_at = statement_timestamp(), retain = $6::bigint * interval '1 microsecond',
	expires_at = CASE WHEN $3 <> 'uncertain' THEN statement_timestamp() + $6::bigint * interval '1 microsecond' END,
	uncertain_since = CASE WHEN $3 = 'uncertain' THEN coalesce(uncertain_since, statement_timestamp()) END
WHERE id = $1 AND token = $2 AND state IN ('open', 'uncertain')`

// foreverSettleWithSQL is foreverSettleSQL with the attempt's ledger entries and follow-ups,
// in one statement, so they commit with the outcome or not at all, and only if the attempt
// still owns the claim (the inserts read from the update's RETURNING).
const foreverSettleWithSQL = `WITH op AS (
	UPDATE once.operations SET state = $3, result = $4, error = $5,
		settled_at = statement_timestamp(), alive_at = statement_timestamp(), retain = $6::bigint * interval '1 microsecond',
		expires_at = CASE WHEN $3 <> 'uncertain' THEN statement_timestamp() + $6::bigint * interval '1 microsecond' END,
		uncertain_since = CASE WHEN $3 = 'uncertain' THEN coalesce(uncertain_since, statement_timestamp()) END
	WHERE id = $1 AND token = $2 AND state IN ('open', 'uncertain')
	RETURNING id, name, scope
), ledger AS (
	INSERT INTO once.ledger (operation_id, operation, scope, kind, unit, quantity, detail)
	SELECT op.id, op.name, op.scope, e.kind, e.unit, e.quantity, nullif(e.detail, '')::json
	FROM op, unnest($7::text[], $8::text[], $9::bigint[], $10::text[]) AS e(kind, unit, quantity, detail)
	ON CONFLICT (operation_id, kind, unit) DO NOTHING
), followups AS (
	INSERT INTO once.followups (operation_id, operation, scope, action, payload, provider_key)
	SELECT op.id, op.name, op.scope, f.action, nullif(f.payload, '')::json, f.provider_key
	FROM op, unnest($11::text[], $12::text[], $13::text[]) AS f(action, payload, provider_key)
	ON CONFLICT (operation_id, action) DO NOTHING
)
SELECT count(*) FROM op`

// Do runs fn at most once for key, for ever (or for Retain): DoRef with Ref{Key: key}.
func (g Forever[T]) Do(ctx context.Context, db DB, key string, fn func(context.Context) (T, error)) (T, Outcome, error) {
	return g.DoRef(ctx, db, Ref{Key: key}, fn)
}

// DoRef runs fn at most once for ref. What it returns:
//
//   - a new claim: fn runs with the claim's Attempt in its context (AttemptFrom) and its
//     outcome is recorded; DoRef returns fn's result and error, with Outcome{Status: Ran,
//     ID: the operation's id}. Two round trips on a fresh key: the claim and the settle.
//   - done: the recorded result, Outcome{Status: Duplicate}, and a nil error.
//   - a recorded terminal failure: Outcome{Status: Duplicate} and a *Failure.
//   - uncertain: Outcome{Status: Duplicate} and an error wrapping ErrUncertain.
//   - open, its holder alive: Outcome{Status: InFlight, ID: the open operation's id} and
//     an error wrapping ErrInFlight. It is an error, unlike Open's redirect, because the
//     caller asked for a result and has none: code that reads only the error must not take
//     a zero T for the answer.
//   - Ref.Input different from the input the key was first used with: ErrMismatch.
//
// On a fresh key the claim is one round trip. A duplicate's claim and read go to the server
// together, pipelined, when db can send a batch (*pgxpool.Pool, *pgx.Conn and pgx.Tx can)
// and the guard has been meeting duplicates lately, so a replay is one round trip too; a
// guard whose keys are almost all new sends the claim alone, and its rare duplicate reads
// in a second round trip (see forever_pipeline.go).
//
// The outcome is recorded even when ctx was cancelled while fn ran. If fn panics, the claim
// is released (RepeatSafe) or marked uncertain, and the panic goes on.
func (g Forever[T]) DoRef(ctx context.Context, db DB, ref Ref, fn func(context.Context) (T, error)) (T, Outcome, error) {
	if err := checkCall(ctx, db, g.Name, ref.Key); err != nil {
		var zero T
		return zero, Outcome{}, err
	}
	return doCall(ctx, db, g.call(kindForever, ref, ref.Key), fn)
}

// doCall claims p's key and runs fn under the claim, or answers from the row it ran into.
func doCall[T any](ctx context.Context, db DB, p *foreverCall, fn func(context.Context) (T, error)) (T, Outcome, error) {
	var zero T
	if err := p.check(fn == nil); err != nil {
		return zero, Outcome{}, err
	}
	if p.stale == 0 {
		p.stale = DefaultStale
		if _, pool := db.(*pgxpool.Pool); pool && p.heartbeat {
			p.stale = DefaultHeartbeatStale
		}
	}
	if err := checkResultType[T](p); err != nil {
		return zero, Outcome{}, err
	}
	a, row, err := p.claimWaiting(ctx, db)
	if err != nil {
		return zero, Outcome{}, classify(err)
	}
	if a == nil {
		return replay[T](p, row)
	}
	return runAttempt(ctx, p, a, fn)
}

// How a call names itself in errors: by what the caller used.
const (
	kindForever   = "forever guard" // Forever.Do, DoRef, and the wrappers oncegen writes
	kindOperation = "operation"     // Operation.Do, and oncehttp
)

// foreverCall is one call of a Forever guard, validated.
type foreverCall struct {
	kind string // kindForever or kindOperation
	name string
	ref  Ref
	// shownKey is the key as the caller wrote it, for messages: an Operation's reference
	// before it was encoded.
	shownKey    string
	fingerprint []byte
	retain      time.Duration
	stale       time.Duration
	repeatSafe  bool
	heartbeat   bool
	maxResult   int
	wait        time.Duration
}

func (g Forever[T]) call(kind string, ref Ref, shownKey string) *foreverCall {
	return &foreverCall{kind: kind, name: g.Name, ref: ref, shownKey: shownKey, retain: g.Retain, stale: g.Stale,
		repeatSafe: g.RepeatSafe, heartbeat: !g.NoHeartbeat, maxResult: g.MaxResult, wait: g.Wait}
}

// what names the call in errors: "forever guard billing.Charge", "operation reports.generate".
func (p *foreverCall) what() string { return p.kind + " " + p.name }

// label names the key in errors: `key "order/42"`, `reference "r-1"`.
func (p *foreverCall) label() string {
	if p.kind == kindOperation {
		return fmt.Sprintf("reference %q", p.shownKey)
	}
	return fmt.Sprintf("key %q", p.shownKey)
}

// retainMicros is the retention as the statements take it: microseconds, nil for ever.
func (p *foreverCall) retainMicros() *int64 {
	if p.retain <= 0 {
		return nil
	}
	us := micros(p.retain)
	return &us
}

// invalid returns an ErrInvalid error naming the call.
func (p *foreverCall) invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, p.what(), fmt.Sprintf(format, args...))
}

// check validates the call's settings and fingerprints its input, before anything is sent.
func (p *foreverCall) check(nilFunc bool) error {
	switch {
	case nilFunc:
		return p.invalid("nil function")
	case len(p.ref.Scope) > MaxKeyLen:
		return p.invalid("scope is %d bytes, over the %d-byte limit", len(p.ref.Scope), MaxKeyLen)
	case !utf8.ValidString(p.ref.Scope) || strings.ContainsRune(p.ref.Scope, 0):
		return p.invalid("scope is not valid UTF-8 text")
	case p.retain < 0:
		return p.invalid("negative retention %v", p.retain)
	case p.stale < 0:
		return p.invalid("negative stale window %v", p.stale)
	case p.maxResult < 0:
		return p.invalid("negative MaxResult %d", p.maxResult)
	case p.wait < 0:
		return p.invalid("negative wait %v", p.wait)
	}
	if p.maxResult == 0 {
		p.maxResult = DefaultMaxResult
	}
	if p.ref.Input != nil {
		fp, err := Fingerprint(p.ref.Input)
		if err != nil {
			return fmt.Errorf("%s: %w", p.what(), err)
		}
		p.fingerprint = fp
	}
	return nil
}

// resultTypes caches checkResultType's verdict per type: reflect.Type to bool.
var resultTypes sync.Map

// checkResultType refuses, before anything runs, a T that encoding/json cannot record
// (channels, functions, complex numbers): finding out after the effect would leave an
// outcome that cannot be replayed.
func checkResultType[T any](p *foreverCall) error {
	t := reflect.TypeFor[T]()
	if ok, known := resultTypes.Load(t); known {
		if !ok.(bool) {
			return p.invalid("result type %s cannot be recorded as JSON", t)
		}
		return nil
	}
	var zero T
	_, err := json.Marshal(zero)
	var unsupported *json.UnsupportedTypeError
	ok := !errors.As(err, &unsupported)
	resultTypes.Store(t, ok)
	if !ok {
		return p.invalid("result type %s cannot be recorded as JSON: %v", t, err)
	}
	return nil
}

// operationRow is the row a claim ran into.
type operationRow struct {
	id          int64
	state       string
	token       string
	attempts    int
	fingerprint []byte
	result      []byte
	errText     *string
	stale       bool
	expired     bool
}

// claim claims the call's key. It returns the new attempt, or the row that answers the call
// instead (done, failed, uncertain, in flight), or an error (ErrMismatch among them).
func (p *foreverCall) claim(ctx context.Context, db DB) (*Attempt, *operationRow, error) {
	history := historyOf(p.name)
	for round := range foreverRounds {
		token := newToken()
		var a *Attempt
		var row *operationRow
		site, err := sendClaim(ctx, db, func(cdb DB) (err error) {
			a, row, err = p.insertOrRead(ctx, cdb, token, history.pipelined())
			return err
		})
		if err != nil {
			return nil, nil, resolveClaim(ctx, db, site, err, p.withdrawUnseen(token))
		}
		if a != nil {
			a.db = db // the attempt settles on the caller's DB, not the claim's connection
		}
		if round == 0 {
			history.record(a == nil)
		}
		if a != nil {
			return a, nil, nil
		}
		if row == nil {
			continue // the row went away between the insert and the read: claim again
		}
		if row.expired {
			// Forgotten: whatever it was used for, the key is free for new work.
			if _, err := db.Exec(ctx, foreverForgetSQL, row.id, row.token); err != nil {
				return nil, nil, p.errorf(err, "forgetting expired operation %d", row.id)
			}
			continue
		}
		if p.fingerprint != nil && row.fingerprint != nil && !bytes.Equal(p.fingerprint, row.fingerprint) {
			return nil, nil, fmt.Errorf("%w: %s: %s (operation %d) was first used with another input",
				ErrMismatch, p.what(), p.label(), row.id)
		}
		switch {
		case row.state == opReleased || (row.state == opOpen && row.stale && p.repeatSafe):
			var a *Attempt
			site, err := sendClaim(ctx, db, func(cdb DB) (err error) {
				a, err = p.takeOver(ctx, cdb, row, token)
				return err
			})
			if err != nil {
				return nil, nil, resolveClaim(ctx, db, site, err, p.withdrawUnseen(token))
			}
			if a != nil {
				a.db = db
				return a, nil, nil
			}
			continue // another caller took it over first: read again
		case row.state == opOpen && row.stale:
			reason := fmt.Sprintf("attempt %d showed no life for %v: its effect may or may not have happened", row.attempts, p.stale)
			tag, err := db.Exec(ctx, foreverAbandonSQL, row.id, row.token, reason, micros(p.stale), p.retainMicros())
			if err != nil {
				return nil, nil, p.errorf(err, "marking operation %d uncertain", row.id)
			}
			if tag.RowsAffected() == 0 {
				continue // it settled or showed life meanwhile: read again
			}
			row.state, row.errText = opUncertain, &reason
		}
		return nil, row, nil
	}
	return nil, nil, fmt.Errorf("once: %s: %s kept changing during %d attempts to claim it", p.what(), p.label(), foreverRounds)
}

// batcher is the part of pgx that sends several statements in one round trip. Every DB pgx
// provides has it; a DB that does not gets the two statements one after the other.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// insertOrRead sends the claim and, when pipeline says so and db can, the read a duplicate
// needs, pipelined with it (see forever_pipeline.go); otherwise the read follows the insert
// only if the insert found the key taken. Either way the read runs after the insert, in a
// new snapshot (READ COMMITTED), so it sees the row the insert ran into: the insert waits
// for that row's inserter to commit. (Pipelined, the two run in one implicit transaction,
// each statement with its own snapshot.)
func (p *foreverCall) insertOrRead(ctx context.Context, db DB, token string, pipeline bool) (*Attempt, *operationRow, error) {
	providerRef := newProviderRef()
	args := []any{p.name, p.ref.Scope, p.ref.Key, token, p.fingerprint, providerRef}
	readArgs := []any{p.name, p.ref.Scope, p.ref.Key, micros(p.stale), token}
	var id int64
	if b, ok := db.(batcher); ok && pipeline {
		batch := &pgx.Batch{}
		batch.Queue(foreverClaimSQL, args...)
		batch.Queue(foreverReadSQL, readArgs...)
		br := b.SendBatch(ctx, batch)
		err := br.QueryRow().Scan(&id)
		if err == nil {
			if cerr := br.Close(); cerr != nil {
				return nil, nil, p.errorf(cerr, "claim")
			}
			return p.newAttempt(db, id, token, 1, providerRef, ""), nil, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			br.Close()
			return nil, nil, p.errorf(err, "claim")
		}
		row, err := scanOperationRow(br.QueryRow())
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, p.errorf(err, "reading the claimed operation")
		}
		return nil, row, nil
	}
	err := db.QueryRow(ctx, foreverClaimSQL, args...).Scan(&id)
	if err == nil {
		return p.newAttempt(db, id, token, 1, providerRef, ""), nil, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, p.errorf(err, "claim")
	}
	row, err := scanOperationRow(db.QueryRow(ctx, foreverReadSQL, readArgs...))
	if err != nil {
		return nil, nil, p.errorf(err, "reading the claimed operation")
	}
	return nil, row, nil
}

// scanOperationRow scans foreverReadSQL's row; no row is (nil, nil).
func scanOperationRow(r pgx.Row) (*operationRow, error) {
	row := &operationRow{}
	err := r.Scan(&row.id, &row.state, &row.token, &row.attempts, &row.fingerprint,
		&row.result, &row.errText, &row.stale, &row.expired)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return row, nil
}

func (p *foreverCall) takeOver(ctx context.Context, db DB, row *operationRow, token string) (*Attempt, error) {
	var attempts int
	var providerRef, recoveryPoint string
	err := db.QueryRow(ctx, foreverTakeoverSQL, row.id, row.token, token, p.fingerprint, p.repeatSafe, micros(p.stale)).
		Scan(&attempts, &providerRef, &recoveryPoint)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, p.errorf(err, "taking over operation %d", row.id)
	}
	return p.newAttempt(db, row.id, token, attempts, providerRef, recoveryPoint), nil
}

func (p *foreverCall) newAttempt(db DB, id int64, token string, number int, providerRef, recoveryPoint string) *Attempt {
	return &Attempt{db: db, call: p, id: id, token: token, number: number, providerRef: providerRef, recoveryPoint: recoveryPoint}
}

func (p *foreverCall) errorf(err error, format string, args ...any) error {
	return fmt.Errorf("once: %s: %s: %s: %w", p.what(), p.label(), fmt.Sprintf(format, args...), err)
}

// replay answers a call from the row it ran into.
func replay[T any](p *foreverCall, row *operationRow) (T, Outcome, error) {
	var zero T
	handle := strconv.FormatInt(row.id, 10)
	out := Outcome{Status: Duplicate, ID: row.id}
	text := ""
	if row.errText != nil {
		text = *row.errText
	}
	switch row.state {
	case opDone:
		if row.result == nil {
			if row.errText != nil { // recorded without its result (see ErrResultTooLarge)
				return zero, out, fmt.Errorf("%w: %s: operation %s: %s", ErrResultTooLarge, p.what(), handle, text)
			}
			return zero, out, nil
		}
		var v T
		if err := json.Unmarshal(row.result, &v); err != nil {
			return zero, out, fmt.Errorf("once: %s: operation %s: recorded result cannot be read as %s: %w",
				p.what(), handle, reflect.TypeFor[T](), err)
		}
		return v, out, nil
	case opFailed:
		return zero, out, &Failure{Name: p.name, ID: row.id, Message: text}
	case opUncertain:
		return zero, out, fmt.Errorf("%w: %s: operation %s needs an operator's resolution: %s", ErrUncertain, p.what(), handle, text)
	default: // open and alive
		return zero, Outcome{Status: InFlight, ID: row.id}, fmt.Errorf("%w: %s: operation %s (attempt %d) is running", ErrInFlight, p.what(), handle, row.attempts)
	}
}

// runAttempt runs fn under a new claim and records its outcome.
func runAttempt[T any](ctx context.Context, p *foreverCall, a *Attempt, fn func(context.Context) (T, error)) (T, Outcome, error) {
	out := Outcome{Status: Ran, ID: a.id}
	// The function's context carries the attempt and the operation's provider key, the same
	// for every attempt, for an effect that passes it on (ProviderKeyFrom).
	actx := context.WithValue(WithProviderKey(ctx, a.ProviderKey(p.name)), attemptContextKey{}, a)
	// The heartbeat stops before the attempt settles, so that it never reads the settled
	// row as a lost claim.
	actx, stopHeartbeat := a.heartbeatWhileRunning(actx)
	defer stopHeartbeat()
	v, err := callSettled(actx, fn, func(sctx context.Context) {
		stopHeartbeat()
		state := opUncertain
		if p.repeatSafe {
			state = opReleased
		}
		a.settle(sctx, state, nil, "the function panicked")
	})
	stopHeartbeat()
	sctx, cancel := settleContext(ctx)
	defer cancel()

	state, result, text := opDone, []byte(nil), ""
	var tooLarge error
	var term terminalError
	var rejected rejectedError
	switch uerr := a.uncertainty(); {
	case uerr != nil || errors.Is(err, ErrUncertain):
		if uerr == nil {
			uerr = err
		}
		state, text = opUncertain, uerr.Error()
	case err == nil:
		enc, merr := json.Marshal(v)
		switch {
		case merr != nil:
			tooLarge = fmt.Errorf("once: %s: operation %d: result cannot be encoded (recorded done without it): %w", p.what(), a.id, merr)
			text = "result could not be encoded: " + merr.Error()
		case len(enc) > p.maxResult:
			text = fmt.Sprintf("result of %d bytes is over the %d-byte limit and was not recorded; record the work in your own table and return its id", len(enc), p.maxResult)
			tooLarge = fmt.Errorf("%w: %s: operation %d: %s", ErrResultTooLarge, p.what(), a.id, text)
		default:
			result = enc
		}
	case errors.As(err, &rejected):
		state, text = opWithdrawn, err.Error()
	case errors.As(err, &term):
		state, text = opFailed, err.Error()
	default:
		state, text = opReleased, err.Error()
	}
	if serr := a.settle(sctx, state, result, text); serr != nil {
		return v, out, errors.Join(err, tooLarge, serr)
	}
	if tooLarge != nil {
		return v, out, errors.Join(err, tooLarge)
	}
	if state == opReleased || state == opWithdrawn {
		err = classify(err) // the claim is released or gone: a transient failure may be retried
	}
	return v, out, err
}

// settle records the attempt's outcome, with its ledger entries and follow-ups when it is
// done or failed (a released or uncertain attempt delivered nothing that can be counted). A
// withdrawn attempt's claim is deleted, or released when it cannot be (see Rejected).
func (a *Attempt) settle(ctx context.Context, state string, result []byte, text string) error {
	p := a.call
	if state == opWithdrawn {
		tag, err := a.db.Exec(ctx, foreverWithdrawSQL, a.id, a.token)
		if err != nil {
			return p.errorf(err, "withdrawing the claim of operation %d", a.id)
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
		state = opReleased // a later attempt, or a checkpoint recorded: keep the row
	}
	var errText *string
	if text != "" {
		text = reasonText(text)
		errText = &text
	}
	retain := p.retainMicros()
	a.mu.Lock()
	ledger, followups := a.ledger, a.followups
	a.mu.Unlock()
	var n int64
	var err error
	if (state == opDone || state == opFailed) && (len(ledger) > 0 || len(followups) > 0) {
		args := []any{a.id, a.token, state, jsonParam(result), errText, retain}
		args = append(args, ledgerColumns(ledger)...)
		args = append(args, followUpColumns(followups)...)
		err = a.db.QueryRow(ctx, foreverSettleWithSQL, args...).Scan(&n)
	} else {
		var tag pgconn.CommandTag
		tag, err = a.db.Exec(ctx, foreverSettleSQL, a.id, a.token, state, jsonParam(result), errText, retain)
		n = tag.RowsAffected()
	}
	if err != nil {
		return p.errorf(err, "recording operation %d as %s", a.id, state)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s: operation %d was taken over or resolved while attempt %d ran; its outcome (%s) was not recorded",
			ErrNotOwner, p.what(), a.id, a.number, state)
	}
	return nil
}
