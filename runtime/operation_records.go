package once

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoOperation: no operation has that id, or that name, scope and key.
var ErrNoOperation = errors.New("once: no such operation")

// ErrNotUncertain: a resolution was asked for an operation that is not uncertain (it was
// resolved already, or never was uncertain). Nothing was changed.
var ErrNotUncertain = errors.New("once: operation is not uncertain")

// OperationRecord is a row of once.operations, as an operator or a status endpoint reads it.
type OperationRecord struct {
	// ID is the operation's id (Outcome.ID).
	ID int64
	// Name, Scope and Key identify it, as stored: key text as Key writes it (an
	// Operation's account and reference are encoded, see Operation).
	Name, Scope, Key string
	// State is "open", "done", "failed", "released" or "uncertain" (see Forever).
	State string
	// Attempts counts the attempts made so far.
	Attempts int
	// Result is the recorded result (JSON) of a done operation; nil otherwise.
	Result json.RawMessage
	// Error is the recorded error of a failed, released or uncertain operation: why.
	Error string
	// RecoveryPoint is the last checkpoint recorded ("" for none).
	RecoveryPoint string
	// ClaimedAt is when the current (or last) attempt claimed it; AliveAt when it last
	// showed life.
	ClaimedAt, AliveAt time.Time
	// SettledAt is when its outcome was recorded, zero while open.
	SettledAt time.Time
	// ExpiresAt is when it is forgotten, zero for never.
	ExpiresAt time.Time
	// Retain is how long its guard keeps a settled outcome, zero for ever.
	Retain time.Duration
}

const operationColumns = `id, name, scope, key, state, attempts, result, coalesce(error, ''), coalesce(recovery_point, ''),
	claimed_at, alive_at, settled_at, expires_at, (extract(epoch FROM retain) * 1000000)::bigint`

func scanOperationRecord(row pgx.Row) (OperationRecord, error) {
	var r OperationRecord
	var settled, expires *time.Time
	var result []byte
	var retain *int64
	err := row.Scan(&r.ID, &r.Name, &r.Scope, &r.Key, &r.State, &r.Attempts, &result, &r.Error, &r.RecoveryPoint,
		&r.ClaimedAt, &r.AliveAt, &settled, &expires, &retain)
	if err != nil {
		return r, err
	}
	if result != nil {
		r.Result = json.RawMessage(result)
	}
	if settled != nil {
		r.SettledAt = *settled
	}
	if expires != nil {
		r.ExpiresAt = *expires
	}
	if retain != nil {
		r.Retain = time.Duration(*retain) * time.Microsecond
	}
	return r, nil
}

// LookupOperation returns the record of the operation name, scope and key (as stored: for an
// Operation, use Operation.Lookup, which encodes them), or an error wrapping ErrNoOperation. An expired record is still returned (until it is reaped or
// claimed anew); its ExpiresAt says so.
func LookupOperation(ctx context.Context, db DB, name, scope, key string) (OperationRecord, error) {
	if err := checkCall(ctx, db, name, key); err != nil {
		return OperationRecord{}, err
	}
	r, err := scanOperationRecord(db.QueryRow(ctx, `SELECT `+operationColumns+`
FROM once.operations WHERE name = $1 AND scope = $2 AND key = $3`, name, scope, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, fmt.Errorf("%w: %s %q in scope %q", ErrNoOperation, name, key, scope)
	}
	if err != nil {
		return r, fmt.Errorf("once: looking up operation %s %q: %w", name, key, err)
	}
	return r, nil
}

// checkList checks the arguments of an operator's list and returns the limit to use: 100
// for 0.
func checkList(ctx context.Context, db DB, limit int) (int, error) {
	if err := checkContextDB(ctx, db); err != nil {
		return 0, err
	}
	if limit < 0 {
		return 0, fmt.Errorf("%w: negative limit %d", ErrInvalid, limit)
	}
	if limit == 0 {
		limit = 100
	}
	return limit, nil
}

// ListUncertain lists the operations whose outcome is unknown, oldest first, for an operator
// to reconcile with the provider and resolve (ResolveDone, ResolveFailed, ResolveRetry).
// name "" lists every guard's; limit 0 means 100.
func ListUncertain(ctx context.Context, db DB, name string, limit int) ([]OperationRecord, error) {
	limit, err := checkList(ctx, db, limit)
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT `+operationColumns+`
FROM once.operations WHERE uncertain_since IS NOT NULL AND state = 'uncertain' AND ($1 = '' OR name = $1)
ORDER BY uncertain_since, id LIMIT $2`, name, limit)
	if err != nil {
		return nil, fmt.Errorf("once: listing uncertain operations: %w", err)
	}
	defer rows.Close()
	var list []OperationRecord
	for rows.Next() {
		r, err := scanOperationRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("once: listing uncertain operations: %w", err)
		}
		list = append(list, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("once: listing uncertain operations: %w", err)
	}
	return list, nil
}

// ResolveDone records an uncertain operation as done, with result (encoded as JSON; nil for
// none): the operator found that the effect happened. Later calls of its key get result.
//
// A resolution is kept as long as the guard keeps an outcome (its Retain, recorded with the
// operation when it was marked uncertain), counted from the resolution; then the key is
// forgotten and ReapExpired deletes the row. An operation whose guard keeps outcomes for ever
// is kept for ever.
func ResolveDone(ctx context.Context, db DB, id int64, result any) error {
	var enc []byte
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return fmt.Errorf("%w: operation %d: result cannot be encoded: %v", ErrInvalid, id, err)
		}
		enc = b
	}
	return resolve(ctx, db, id, opDone, enc, nil)
}

// ResolveFailed records an uncertain operation as a terminal failure with message: the
// operator found that the effect did not happen and must not be tried again. Later calls of
// its key get a *Failure. It is kept as ResolveDone says.
func ResolveFailed(ctx context.Context, db DB, id int64, message string) error {
	if message == "" {
		return fmt.Errorf("%w: operation %d: empty failure message", ErrInvalid, id)
	}
	return resolve(ctx, db, id, opFailed, nil, &message)
}

// ResolveRetry releases an uncertain operation: the operator found that the effect did not
// happen (or that a repeat is harmless), and the next call of its key runs it again. A key
// that is never called again is forgotten after the guard's Retain, as ResolveDone says.
func ResolveRetry(ctx context.Context, db DB, id int64) error {
	return resolve(ctx, db, id, opReleased, nil, nil)
}

func resolve(ctx context.Context, db DB, id int64, state string, result []byte, message *string) error {
	if err := checkContextDB(ctx, db); err != nil {
		return err
	}
	var was string
	err := db.QueryRow(ctx, `WITH target AS (SELECT id, state FROM once.operations WHERE id = $1 FOR UPDATE),
resolved AS (
	UPDATE once.operations o SET state = $2, result = $3,
		error = CASE WHEN $2 = 'done' THEN NULL ELSE coalesce($4, o.error || ' (released by an operator)') END,
		settled_at = statement_timestamp(), expires_at = statement_timestamp() + o.retain, uncertain_since = NULL
	FROM target
	WHERE o.id = target.id AND target.state = 'uncertain'
	RETURNING o.id
)
SELECT target.state FROM target`, id, state, jsonParam(result), message).Scan(&was)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: %d", ErrNoOperation, id)
	case err != nil:
		return fmt.Errorf("once: resolving operation %d as %s: %w", id, state, err)
	case was != opUncertain:
		return fmt.Errorf("%w: operation %d is %s", ErrNotUncertain, id, was)
	}
	return nil
}
