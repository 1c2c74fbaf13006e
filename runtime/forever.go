package once

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// The defaults of a zero field.
const (
	// DefaultMaxResult is the largest result, in bytes of JSON, a Forever guard records when
	// its MaxResult is zero. A recorded result is a receipt (an id, a status, a small
	// summary), not the work product: a report or an image belongs in the application's own
	// table, and the result names it.
	DefaultMaxResult = 64 << 10
	// DefaultHeartbeatStale is the stale window of a Forever or Open guard whose Stale is
	// zero when a heartbeat shows a long function's life (see Forever.NoHeartbeat): three
	// heartbeats.
	DefaultHeartbeatStale = 45 * time.Second
	// DefaultStale is the stale window of a guard whose Stale is zero and whose claims show
	// no life while they are open (a claim made by Open.Claim, a call on one connection or
	// with NoHeartbeat): a claim that showed none for this long is taken to have lost its
	// holder.
	DefaultStale = 20 * time.Minute
)

// foreverRounds bounds the claim loop. Each extra round follows a row that changed between
// the insert and the read (settled, taken over, expired and deleted); more than a few in a
// row means something keeps changing the key as fast as it is claimed.
const foreverRounds = 8

// Forever is the longest promise: once for ever, or for Retain. The first call of a key
// claims it and runs the function; the outcome is recorded, and every later call of the key
// gets the recorded outcome without running anything: the value (ForeverValue, decoded
// through encoding/json) for a success, the error for a terminal failure.
//
// Claims live in once.operations, one row per Name, scope and key, whose state an operator
// can read: open, done, failed, released (a retryable failure: the next call runs again) or
// uncertain (the effect may or may not have happened: never run again until resolved, see
// onceops.ListUncertain).
//
// How the function's error is recorded is the function's choice:
//
//   - nil: done, the value is recorded and replayed;
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
//
// A front door that names each intention by a client's reference (an Idempotency-Key) is a
// Forever guard whose Ref scopes the reference to the authenticated account:
// Ref{Scope: MustKey(account), Key: MustKey(reference)}, as oncehttp stores it and as a
// generated wrapper with scope=account key=reference does, so all three meet on one row.
type Forever struct {
	// Name identifies the guard; claims are per Name, scope and key.
	Name string
	// Retain is how long a settled outcome is kept. Zero keeps it for ever. After it the key
	// is forgotten: a late retry runs as new work, and onceops.ReapExpired deletes the row.
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
	// Record says what is recorded of a successful call's value (ForeverValue): the value
	// (RecordValue, the zero value), nothing (RecordNothing) or its digest (RecordDigest).
	// Under the last two a duplicate learns that the work was done, not what it returned:
	// it gets T's zero value with the Duplicate outcome.
	Record Record
	// Seal, when set, is what the recorded value passes through: its JSON is sealed before
	// it is written (and stored as a JSON string of the sealed bytes' base64, marked sealed
	// in result_form) and opened when a duplicate replays it, so a secret in the value (a
	// payment's client secret) is never in once.operations in the clear. If Seal fails
	// after the function succeeded, the operation is recorded done without its result, as
	// one over MaxResult is; if Open fails, the duplicate gets an error wrapping it, with
	// the Duplicate outcome, and the row is left as it is. It applies to RecordValue only.
	Seal Sealer
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
	// answers Outcome{Status: InFlight} at once. While it waits it polls, with pauses of
	// 5-10 ms, then 10-20 ms, doubling up to 250-500 ms, each drawn at random (see wait.go
	// for why polling).
	Wait time.Duration
}

// Ref names one forever operation: a key, in a scope, optionally with the input it stands
// for. Scope and Key are stored as they are given, and are meant to be key text, as Key
// writes it: generated wrappers pass Key of their scope= and key= expressions, and oncehttp
// stores MustKey(account) and MustKey(reference). A call by hand that should meet those
// encodes the same way.
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
	// Operation is the operation's id.
	Operation string
	// Message is the text of the error the function returned, as stored: NUL bytes dropped,
	// invalid UTF-8 replaced, and cut at 2000 bytes.
	Message string
}

// Error returns the recorded message with the guard it came from.
func (f *Failure) Error() string {
	return fmt.Sprintf("once: %s (operation %s) failed earlier: %s", f.Name, f.Operation, f.Message)
}

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

// Operation states, as stored in once.operations.state (the type once.operation_state).
const (
	opOpen      = "open"
	opDone      = "done"
	opFailed    = "failed"
	opReleased  = "released"
	opUncertain = "uncertain"
	// opWithdrawn is not stored: a withdrawn claim's row is deleted (see Rejected).
	opWithdrawn = "withdrawn"
)

// The claim is the insert: ON CONFLICT DO NOTHING leaves an existing row alone, and an insert
// that inserted nothing is how a duplicate is told (its command tag, so the claim returns no
// row). The operation's id ($4) and the attempt's token ($5) are drawn in the process: the
// claim costs the server no draw, and needs nothing back but the tag. Its row writes one
// index entry, the primary key's: the key is the promise.
//
// A call with neither an input to fingerprint nor a retention, the common one, sends
// foreverClaimPlainSQL, which binds only what it stores: every parameter is decoded by the
// server at each execution, NULL or not.
const (
	foreverClaimSQL = `INSERT INTO once.operations (name, scope, key, id, token, fingerprint, retain)
VALUES ($1, $2, $3, $4, $5, $6, $7::bigint * interval '1 microsecond')
ON CONFLICT (name, scope, key) DO NOTHING`
	foreverClaimPlainSQL = `INSERT INTO once.operations (name, scope, key, id, token) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (name, scope, key) DO NOTHING`
)

// foreverReadSQL reads the key's row: the one a claim ran into, in a statement of its own
// after the insert, in a new snapshot (READ COMMITTED), so it sees the row the insert ran
// into (the insert waits for that row's inserter to commit); or, for a guard whose claims
// keep meeting existing rows, before any insert (see insertOrRead). Its columns are what a
// duplicate is answered from; staleness ($4: the stale window, in µs) and expiry are judged
// by the database's clock, which every process shares.
const foreverReadSQL = `SELECT id::text, state::text, token, attempts, fingerprint, result, coalesce(result_form, ''), error,
	state = 'open' AND alive_at < clock_timestamp() - $4::bigint * interval '1 microsecond',
	expires_at IS NOT NULL AND expires_at <= clock_timestamp()
FROM once.operations WHERE name = $1 AND scope = $2 AND key = $3`

// foreverTakeoverSQL gives a released claim, or (for a repeat-safe guard) a stale open one,
// to a new attempt of the same operation. It is conditional on the token read, so of two
// callers taking over the same row only one succeeds; the other reads again.
const foreverTakeoverSQL = `UPDATE once.operations SET state = 'open', token = $5, attempts = attempts + 1,
	claimed_at = statement_timestamp(), alive_at = statement_timestamp(), settled_at = NULL, expires_at = NULL,
	uncertain_since = NULL, result = NULL, result_form = NULL, error = NULL, fingerprint = coalesce(fingerprint, $6),
	retain = $9::bigint * interval '1 microsecond'
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND (state = 'released' OR ($7::bool AND state = 'open'
	AND alive_at < clock_timestamp() - $8::bigint * interval '1 microsecond'))
RETURNING attempts, coalesce(recovery_point, '')`

// foreverAbandonSQL marks a stale open claim uncertain: its holder stopped showing life, and
// nothing says whether its effect happened.
const foreverAbandonSQL = `UPDATE once.operations SET state = 'uncertain', settled_at = statement_timestamp(),
	uncertain_since = statement_timestamp(), error = $5
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state = 'open'
	AND alive_at < clock_timestamp() - $6::bigint * interval '1 microsecond'`

// foreverForgetSQL deletes an expired row so the key can be claimed as new work (with a new
// id, so its ledger entries and follow-ups are its own), and with it its checkpoints and the
// follow-ups it enqueued that are delivered (see onceops.ReapExpired).
const foreverForgetSQL = `WITH op AS (
	DELETE FROM once.operations
	WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND expires_at IS NOT NULL AND expires_at <= clock_timestamp()
	RETURNING id
), checkpoints AS (
	DELETE FROM once.checkpoints c USING op WHERE c.operation_id = op.id
)
DELETE FROM once.followups f USING op WHERE f.operation_id = op.id AND f.state = 'delivered'`

// foreverWithdrawSQL deletes a rejected attempt's claim (see Rejected), only while it is the
// key's first attempt and has recorded no checkpoint: then nothing of the operation can
// exist beyond its row.
const foreverWithdrawSQL = `DELETE FROM once.operations
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state = 'open' AND attempts = 1 AND recovery_point IS NULL`

// foreverSettleDoneSQL records a done attempt, the common settle. It is conditional on the
// attempt's token; an uncertain row is accepted too, because a holder that was marked
// uncertain for showing no life, and then returned, knows the outcome the mark was guessing
// at. The clock is read once, as statement_timestamp() (see clock.go), so a settled outcome
// expires exactly its retention after settled_at.
//
// It is a HOT update when the guard keeps outcomes for ever: no index reads a column it
// changes (the list of uncertain operations is indexed on uncertain_since, which stays NULL
// from open to done), and the table leaves room in each page for the new row version (its
// fillfactor), so PostgreSQL writes the new version beside the old one and no index entry.
// A guard with a Retain sets expires_at, which the reaper's index reads, and pays its entry.
const foreverSettleDoneSQL = `UPDATE once.operations SET state = 'done', result = $5, result_form = $7, error = $6,
	settled_at = statement_timestamp(), expires_at = statement_timestamp() + retain, uncertain_since = NULL
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state IN ('open', 'uncertain')`

// foreverSettleResultSQL is foreverSettleDoneSQL for a plain result ($5, or NULL) recorded
// with no note: it binds only the result. It leaves result_form as it is, NULL: a claim
// writes none, and every statement that makes a row open or uncertain clears it. A form's
// parameter would cost the server its domain's input function at every bind.
const foreverSettleResultSQL = `UPDATE once.operations SET state = 'done', result = $5, error = NULL,
	settled_at = statement_timestamp(), expires_at = statement_timestamp() + retain, uncertain_since = NULL
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state IN ('open', 'uncertain')`

// foreverSettleSQL records an attempt that failed, was released or is uncertain ($5).
const foreverSettleSQL = `UPDATE once.operations SET state = $5::once.operation_state, result = NULL, result_form = NULL, error = $6,
	settled_at = statement_timestamp(),
	expires_at = CASE WHEN $5::once.operation_state <> 'uncertain' THEN statement_timestamp() + retain END,
	uncertain_since = CASE WHEN $5::once.operation_state = 'uncertain' THEN coalesce(uncertain_since, statement_timestamp()) END
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state IN ('open', 'uncertain')`

// foreverSettleWithSQL is a settle with the attempt's ledger entries and follow-ups, in one
// statement, so they commit with the outcome or not at all, and only if the attempt still
// owns the claim (the inserts read from the update's RETURNING).
const foreverSettleWithSQL = `WITH op AS (
	UPDATE once.operations SET state = $5::once.operation_state, result = $6, result_form = $15, error = $7,
		settled_at = statement_timestamp(),
		expires_at = CASE WHEN $5::once.operation_state <> 'uncertain' THEN statement_timestamp() + retain END,
		uncertain_since = CASE WHEN $5::once.operation_state = 'uncertain' THEN coalesce(uncertain_since, statement_timestamp()) END
	WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state IN ('open', 'uncertain')
	RETURNING id, name, scope, key
), ledger AS (
	INSERT INTO once.ledger (operation_id, operation, scope, key, kind, unit, quantity, detail)
	SELECT op.id, op.name, op.scope, op.key, e.kind, e.unit, e.quantity, nullif(e.detail, '')::json
	FROM op, unnest($8::text[], $9::text[], $10::bigint[], $11::text[]) AS e(kind, unit, quantity, detail)
	ON CONFLICT (operation_id, kind, unit) DO NOTHING
), followups AS (
	INSERT INTO once.followups (operation_id, operation, scope, key, action, payload, provider_key)
	SELECT op.id, op.name, op.scope, op.key, f.action, nullif(f.payload, '')::json, f.provider_key
	FROM op, unnest($12::text[], $13::text[], $14::text[]) AS f(action, payload, provider_key)
	ON CONFLICT (operation_id, action) DO NOTHING
)
SELECT count(*) FROM op`

// Do runs fn at most once for ref, for ever (or for Retain), and records its outcome but no
// value (ForeverValue records fn's value too). What it returns:
//
//   - a new claim: fn runs with the claim's Attempt in its context (AttemptFrom) and its
//     outcome is recorded; Do returns fn's error, with Outcome{Status: Ran, Claim: the
//     operation's id}. Two round trips on a fresh key: the claim and the settle.
//   - done: Outcome{Status: Duplicate, Holder: the operation's id} and a nil error.
//   - a recorded terminal failure: Outcome{Status: Duplicate} and a *Failure.
//   - uncertain: Outcome{Status: Duplicate} and an error wrapping ErrUncertain.
//   - open, its holder alive: Outcome{Status: InFlight, Holder: the operation's id} and a
//     nil error, after waiting up to Wait for the holder to settle (then answering as
//     above, or running fn if the holder released the key).
//   - Ref.Input different from the input the key was first used with: ErrMismatch.
//
// A duplicate is one round trip: a guard that has been meeting existing rows lately reads
// the key's row before it claims (see claim_history.go).
//
// The outcome is recorded even when ctx was cancelled while fn ran. If fn panics, the claim
// is released (RepeatSafe) or marked uncertain, and the panic goes on.
func (g Forever) Do(ctx context.Context, db DB, ref Ref, fn func(context.Context) error) (Outcome, error) {
	var run func(context.Context) (struct{}, error)
	if fn != nil {
		run = func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) }
	}
	_, out, err := foreverDo(ctx, db, g.call(ref, false), run)
	return out, err
}

// ForeverValue is Forever.Do for a function that returns a value: the value is recorded
// (encoded through encoding/json, at most MaxResult bytes) and a later call of the key gets
// it back, decoded into T. A key recorded without a value (by Do) replays T's zero value.
func ForeverValue[T any](ctx context.Context, db DB, g Forever, ref Ref, fn func(context.Context) (T, error)) (T, Outcome, error) {
	return foreverDo(ctx, db, g.call(ref, true), fn)
}

// foreverDo claims p's key and runs fn under the claim, or answers from the row it ran into.
func foreverDo[T any](ctx context.Context, db DB, p *foreverCall, fn func(context.Context) (T, error)) (T, Outcome, error) {
	var zero T
	if err := checkCall(ctx, db, p.name, p.ref.Key); err != nil {
		return zero, Outcome{}, err
	}
	if err := p.check(fn == nil); err != nil {
		return zero, Outcome{}, err
	}
	if p.stale == 0 {
		p.stale = DefaultStale
		if beatsByItself(db) && p.heartbeat {
			p.stale = DefaultHeartbeatStale
		}
	}
	if p.value {
		if err := checkResultType[T](p); err != nil {
			return zero, Outcome{}, err
		}
	}
	a, row, err := p.claimWaiting(ctx, db)
	if err != nil {
		return zero, Outcome{}, classify(err)
	}
	if a == nil {
		v, out, err := replay[T](ctx, p, row)
		countAnswered(db, "forever", p.name, out.Status)
		return v, out, err
	}
	return runAttempt(ctx, p, a, fn)
}

// foreverCall is one call of a Forever guard, validated.
type foreverCall struct {
	name        string
	ref         Ref
	fingerprint []byte
	retain      time.Duration
	stale       time.Duration
	repeatSafe  bool
	heartbeat   bool
	maxResult   int
	wait        time.Duration
	record      Record
	sealer      Sealer
	// value says the call records its function's value (ForeverValue), not only its outcome.
	value bool
}

func (g Forever) call(ref Ref, value bool) *foreverCall {
	return &foreverCall{name: g.Name, ref: ref, retain: g.Retain, stale: g.Stale, repeatSafe: g.RepeatSafe,
		heartbeat: !g.NoHeartbeat, maxResult: g.MaxResult, wait: g.Wait, record: g.Record, sealer: g.Seal, value: value}
}

// what names the call in errors: "forever guard billing.Charge".
func (p *foreverCall) what() string { return "forever guard " + p.name }

// label names the key in errors: `key "order/42"`.
func (p *foreverCall) label() string { return fmt.Sprintf("key %q", p.ref.Key) }

// keyArgs are the first four arguments of every statement on the call's row: its key and
// the attempt's token.
func (p *foreverCall) keyArgs(token string) []any {
	return []any{p.name, p.ref.Scope, p.ref.Key, token}
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
	case p.record > RecordDigest:
		return p.invalid("unknown Record %d", p.record)
	case p.record != RecordValue && p.sealer != nil:
		return p.invalid("Seal is set but Record keeps no value to seal")
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
	id          string
	state       string
	token       string
	attempts    int
	fingerprint []byte
	result      []byte
	form        string // result_form: "" for a plain result
	errText     *string
	stale       bool
	expired     bool
}

// claim claims the call's key. It returns the new attempt, or the row that answers the call
// instead (done, failed, uncertain, in flight), or an error (ErrMismatch among them).
func (p *foreverCall) claim(ctx context.Context, db DB) (*Attempt, *operationRow, error) {
	if m := memoryOf(db); m != nil {
		return p.memoryClaim(m, db)
	}
	history := historyOf(p.name)
	for round := range foreverRounds {
		token := newToken()
		var a *Attempt
		var row *operationRow
		site, err := sendClaim(ctx, db, func(cdb DB) (err error) {
			a, row, err = p.insertOrRead(ctx, cdb, token, history.readFirst())
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
			continue // the row went away between the insert and the read, or is newer than the read: claim again
		}
		if row.expired {
			// Forgotten: whatever it was used for, the key is free for new work.
			if _, err := db.Exec(ctx, foreverForgetSQL, p.keyArgs(row.token)...); err != nil {
				return nil, nil, p.errorf(err, "forgetting expired operation %s", row.id)
			}
			continue
		}
		if p.fingerprint != nil && row.fingerprint != nil && !bytes.Equal(p.fingerprint, row.fingerprint) {
			return nil, nil, fmt.Errorf("%w: %s: %s (operation %s) was first used with another input",
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
			tag, err := db.Exec(ctx, foreverAbandonSQL, append(p.keyArgs(row.token), reason, dbcall.Micros(p.stale))...)
			if err != nil {
				return nil, nil, p.errorf(err, "marking operation %s uncertain", row.id)
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

// insertOrRead sends the claim. When readFirst says so, it first reads the key's row
// (foreverReadSQL, a plain read by the primary key: no insert planned, no lock, nothing
// written), and answers from it when there is one, so a duplicate is one round trip and the
// cheapest statement the table allows; only where there is none does it send the insert.
// Otherwise it sends the insert alone and, only if the insert found the key taken, the read a
// duplicate needs. Either way the insert is the check: a row the read did not see (committed
// after its snapshot) is a conflict, and the read after it finds the row. It returns the new
// attempt, or the row read, or neither when the claim must be made again.
func (p *foreverCall) insertOrRead(ctx context.Context, db DB, token string, readFirst bool) (*Attempt, *operationRow, error) {
	if readFirst {
		row, err := scanOperationRow(db.QueryRow(ctx, foreverReadSQL, p.name, p.ref.Scope, p.ref.Key, dbcall.Micros(p.stale)))
		if err != nil {
			return nil, nil, p.errorf(err, "reading the claimed operation")
		}
		if row != nil {
			return nil, row, nil
		}
	}
	id := newOperationID()
	var tag pgconn.CommandTag
	var err error
	if p.fingerprint == nil && p.retain == 0 {
		tag, err = db.Exec(ctx, foreverClaimPlainSQL, p.name, p.ref.Scope, p.ref.Key, id, token)
	} else {
		tag, err = db.Exec(ctx, foreverClaimSQL, p.name, p.ref.Scope, p.ref.Key, id, token, p.fingerprint, dbcall.MicrosOrNil(p.retain))
	}
	if err != nil {
		return nil, nil, p.errorf(err, "claim")
	}
	if tag.RowsAffected() == 1 {
		return p.newAttempt(db, id, token, 1, ""), nil, nil
	}
	row, err := scanOperationRow(db.QueryRow(ctx, foreverReadSQL, p.name, p.ref.Scope, p.ref.Key, dbcall.Micros(p.stale)))
	if err != nil {
		return nil, nil, p.errorf(err, "reading the claimed operation")
	}
	return nil, row, nil
}

// scanOperationRow scans foreverReadSQL's row; no row is (nil, nil).
func scanOperationRow(r pgx.Row) (*operationRow, error) {
	row := &operationRow{}
	err := r.Scan(&row.id, &row.state, &row.token, &row.attempts, &row.fingerprint,
		&row.result, &row.form, &row.errText, &row.stale, &row.expired)
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
	var recoveryPoint string
	args := append(p.keyArgs(row.token), token, p.fingerprint, p.repeatSafe, dbcall.Micros(p.stale), dbcall.MicrosOrNil(p.retain))
	err := db.QueryRow(ctx, foreverTakeoverSQL, args...).Scan(&attempts, &recoveryPoint)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, p.errorf(err, "taking over operation %s", row.id)
	}
	return p.newAttempt(db, row.id, token, attempts, recoveryPoint), nil
}

func (p *foreverCall) newAttempt(db DB, id, token string, number int, recoveryPoint string) *Attempt {
	return &Attempt{db: db, call: p, id: id, token: token, number: number, recoveryPoint: recoveryPoint}
}

func (p *foreverCall) errorf(err error, format string, args ...any) error {
	return fmt.Errorf("once: %s: %s: %s: %w", p.what(), p.label(), fmt.Sprintf(format, args...), err)
}

// replay answers a call from the row it ran into. A result recorded as nothing or as a
// digest replays T's zero value; a sealed one is opened (with ctx) first.
func replay[T any](ctx context.Context, p *foreverCall, row *operationRow) (T, Outcome, error) {
	var zero T
	out := Outcome{Status: Duplicate, Holder: row.id}
	text := ""
	if row.errText != nil {
		text = *row.errText
	}
	switch row.state {
	case opDone:
		if row.result == nil {
			if row.errText != nil { // recorded without its result (see ErrResultTooLarge)
				return zero, out, fmt.Errorf("%w: %s: operation %s: %s", ErrResultTooLarge, p.what(), row.id, text)
			}
			return zero, out, nil
		}
		if !p.value {
			return zero, out, nil
		}
		if row.form != "" {
			if row.form != formSealed {
				return zero, out, nil // a digest: the work was done, its value is not kept
			}
			v, err := openSealed[T](ctx, p, row)
			if err != nil {
				return zero, out, err
			}
			return v, out, nil
		}
		var v T
		if err := json.Unmarshal(row.result, &v); err != nil {
			return zero, out, fmt.Errorf("once: %s: operation %s: recorded result cannot be read as %s: %w",
				p.what(), row.id, reflect.TypeFor[T](), err)
		}
		return v, out, nil
	case opFailed:
		return zero, out, &Failure{Name: p.name, Operation: row.id, Message: text}
	case opUncertain:
		return zero, out, fmt.Errorf("%w: %s: operation %s needs an operator's resolution: %s", ErrUncertain, p.what(), row.id, text)
	default: // open and alive: the function did not run, and the promise is another's
		return zero, Outcome{Status: InFlight, Holder: row.id}, nil
	}
}

// runAttempt runs fn under a new claim and records its outcome.
func runAttempt[T any](ctx context.Context, p *foreverCall, a *Attempt, fn func(context.Context) (T, error)) (T, Outcome, error) {
	out := Outcome{Status: Ran, Claim: a.id}
	// The function's context carries the attempt, and through it the operation's provider
	// key, the same for every attempt, for an effect that passes it on (ProviderKeyFrom).
	var actx context.Context = attemptContext{ctx, a}
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
		a.settle(sctx, state, nil, "", "the function panicked")
	})
	stopHeartbeat()
	sctx, cancel := dbcall.SettleContext(ctx)
	defer cancel()

	state, result, form, text := opDone, []byte(nil), "", ""
	var tooLarge error
	var term terminalError
	var rejected rejectedError
	switch uerr := a.uncertainty(); {
	case uerr != nil || errors.Is(err, ErrUncertain):
		if uerr == nil {
			uerr = err
		}
		state, text = opUncertain, uerr.Error()
	case err == nil && p.value && p.record == RecordNothing:
		form = formNone
	case err == nil && p.value && (p.record == RecordDigest || p.sealer != nil):
		result, form, text, tooLarge = p.atRest(sctx, a.id, v)
	case err == nil && p.value:
		enc, merr := json.Marshal(v)
		switch {
		case merr != nil:
			tooLarge = fmt.Errorf("once: %s: operation %s: result cannot be encoded (recorded done without it): %w", p.what(), a.id, merr)
			text = "result could not be encoded: " + merr.Error()
		case len(enc) > p.maxResult:
			text = fmt.Sprintf("result of %d bytes is over the %d-byte limit and was not recorded; record the work in your own table and return its id", len(enc), p.maxResult)
			tooLarge = fmt.Errorf("%w: %s: operation %s: %s", ErrResultTooLarge, p.what(), a.id, text)
		default:
			result = enc
		}
	case err == nil:
	case errors.As(err, &rejected):
		state, text = opWithdrawn, err.Error()
	case errors.As(err, &term):
		state, text = opFailed, err.Error()
	default:
		state, text = opReleased, err.Error()
	}
	if serr := a.settle(sctx, state, result, form, text); serr != nil {
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
// withdrawn attempt's claim is deleted, or released when it cannot be (see Rejected). form is
// the result's form (see Record and Sealer), "" for a plain one.
func (a *Attempt) settle(ctx context.Context, state string, result []byte, form, text string) error {
	if m := memoryOf(a.db); m != nil {
		return a.memorySettle(m, state, result, form, text)
	}
	p := a.call
	if state == opWithdrawn {
		tag, err := a.db.Exec(ctx, foreverWithdrawSQL, p.keyArgs(a.token)...)
		if err != nil {
			return p.errorf(err, "withdrawing the claim of operation %s", a.id)
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
		state = opReleased // a later attempt, or a checkpoint recorded: keep the row
	}
	var errText *string
	if text != "" {
		text = dbcall.Reason(text)
		errText = &text
	}
	a.mu.Lock()
	ledgerRows, followups := a.ledger, a.followups
	a.mu.Unlock()
	var n int64
	var err error
	switch {
	case (state == opDone || state == opFailed) && (len(ledgerRows) > 0 || len(followups) > 0):
		args := append(p.keyArgs(a.token), state, dbcall.JSON(result), errText)
		args = append(args, ledgerColumns(ledgerRows)...)
		args = append(args, followUpColumns(followups)...)
		args = append(args, formArg(form))
		err = a.db.QueryRow(ctx, foreverSettleWithSQL, args...).Scan(&n)
	case state == opDone && form == "" && errText == nil:
		var tag pgconn.CommandTag
		tag, err = a.db.Exec(ctx, foreverSettleResultSQL, p.name, p.ref.Scope, p.ref.Key, a.token, dbcall.JSON(result))
		n = tag.RowsAffected()
	case state == opDone:
		var tag pgconn.CommandTag
		tag, err = a.db.Exec(ctx, foreverSettleDoneSQL, append(p.keyArgs(a.token), dbcall.JSON(result), errText, formArg(form))...)
		n = tag.RowsAffected()
	default:
		var tag pgconn.CommandTag
		tag, err = a.db.Exec(ctx, foreverSettleSQL, append(p.keyArgs(a.token), state, errText)...)
		n = tag.RowsAffected()
	}
	if err != nil {
		return p.errorf(err, "recording operation %s as %s", a.id, state)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s: operation %s was taken over or resolved while attempt %d ran; its outcome (%s) was not recorded",
			ErrNotOwner, p.what(), a.id, a.number, state)
	}
	return nil
}
