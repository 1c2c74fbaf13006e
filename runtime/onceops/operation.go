package onceops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
)

// ErrNoOperation: no operation has that id, or that name, scope and key.
var ErrNoOperation = errors.New("once: no such operation")

// ErrNotUncertain: a resolution was asked for an operation that is not uncertain (it was
// resolved already, or never was uncertain). Nothing was changed.
var ErrNotUncertain = errors.New("once: operation is not uncertain")

// Operation is a row of once.operations, as an operator or a status endpoint reads it.
type Operation struct {
	// ID is the operation's id (a UUID): once.Outcome.Claim or Holder names it, and
	// Attempt.ID returns it.
	ID string
	// Name, Scope and Key identify it, as stored: key text as once.Key writes it.
	Name, Scope, Key string
	// State is "open", "done", "failed", "released" or "uncertain" (see once.Forever).
	State string
	// Attempts counts the attempts made so far.
	Attempts int
	// Result is the recorded result (JSON) of a done operation; nil otherwise.
	Result json.RawMessage
	// ResultForm is how Result is kept (once.Forever's Record and Seal): "" for the value
	// itself, "sealed" for a JSON string of the base64 of the sealed value, "digest" for a
	// JSON string of the value's hex SHA-256, "none" for nothing.
	ResultForm string
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

const operationColumns = `id::text, name, scope, key, state::text, attempts, result, coalesce(result_form, ''), coalesce(error, ''), coalesce(recovery_point, ''),
	claimed_at, alive_at, settled_at, expires_at, (extract(epoch FROM retain) * 1000000)::bigint`

func scanOperation(row pgx.Row) (Operation, error) {
	var r Operation
	var settled, expires *time.Time
	var result []byte
	var retain *int64
	err := row.Scan(&r.ID, &r.Name, &r.Scope, &r.Key, &r.State, &r.Attempts, &result, &r.ResultForm, &r.Error, &r.RecoveryPoint,
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

// Lookup returns the record of the operation of guard name, scope and key, as stored (key
// text as once.Key writes it: a generated wrapper stores once.Key of its scope= and key=
// expressions), or an error wrapping ErrNoOperation. An expired record is still returned
// (until it is reaped or claimed anew); its ExpiresAt says so. It is one read of the key's
// primary key: a status endpoint ("still running", "done, here is the result") may call it
// for every request.
func Lookup(ctx context.Context, db once.DB, name, scope, key string) (Operation, error) {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return Operation{}, err
	}
	if err := dbcall.NameKey(name, key); err != nil {
		return Operation{}, err
	}
	r, err := scanOperation(db.QueryRow(ctx, `SELECT `+operationColumns+`
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
func checkList(ctx context.Context, db once.DB, limit int) (int, error) {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return 0, err
	}
	if limit < 0 {
		return 0, fmt.Errorf("%w: negative limit %d", dbcall.ErrInvalid, limit)
	}
	if limit == 0 {
		limit = 100
	}
	return limit, nil
}

// ListUncertain lists the operations whose outcome is unknown, oldest first, for an operator
// to reconcile with the provider and resolve (ResolveDone, ResolveFailed, ResolveRetry).
// name "" lists every guard's; limit 0 means 100.
func ListUncertain(ctx context.Context, db once.DB, name string, limit int) ([]Operation, error) {
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
	var list []Operation
	for rows.Next() {
		r, err := scanOperation(rows)
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
// operation when it was claimed), counted from the resolution; then the key is forgotten
// and ReapExpired deletes the row. An operation whose guard keeps outcomes for ever is kept
// for ever.
func ResolveDone(ctx context.Context, db once.DB, id string, result any) error {
	var enc []byte
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return fmt.Errorf("%w: operation %s: result cannot be encoded: %v", dbcall.ErrInvalid, id, err)
		}
		enc = b
	}
	return resolve(ctx, db, id, "done", enc, nil)
}

// ResolveFailed records an uncertain operation as a terminal failure with message: the
// operator found that the effect did not happen and must not be tried again. Later calls of
// its key get a *once.Failure. It is kept as ResolveDone says.
func ResolveFailed(ctx context.Context, db once.DB, id string, message string) error {
	if message == "" {
		return fmt.Errorf("%w: operation %s: empty failure message", dbcall.ErrInvalid, id)
	}
	return resolve(ctx, db, id, "failed", nil, &message)
}

// ResolveRetry releases an uncertain operation: the operator found that the effect did not
// happen (or that a repeat is harmless), and the next call of its key runs it again. A key
// that is never called again is forgotten after the guard's Retain, as ResolveDone says.
func ResolveRetry(ctx context.Context, db once.DB, id string) error {
	return resolve(ctx, db, id, "released", nil, nil)
}

// resolveSQL resolves the uncertain operation $1. An operation's id is drawn, not a key, so
// it is found among the uncertain ones (their index), and the update is made by the key.
const resolveSQL = `WITH target AS (
	SELECT name, scope, key FROM once.operations
	WHERE id = $1::uuid AND uncertain_since IS NOT NULL AND state = 'uncertain'
	FOR UPDATE
)
UPDATE once.operations o SET state = $2::once.operation_state, result = $3, result_form = NULL,
	error = CASE WHEN $2::once.operation_state = 'done' THEN NULL ELSE coalesce($4, o.error || ' (released by an operator)') END,
	settled_at = statement_timestamp(), expires_at = statement_timestamp() + o.retain, uncertain_since = NULL
FROM target
WHERE (o.name, o.scope, o.key) = (target.name, target.scope, target.key) AND o.id = $1::uuid AND o.state = 'uncertain'`

func resolve(ctx context.Context, db once.DB, id string, state string, result []byte, message *string) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	if !dbcall.IsUUID(id) {
		return fmt.Errorf("%w: operation id %q is not a UUID", dbcall.ErrInvalid, id)
	}
	tag, err := db.Exec(ctx, resolveSQL, id, state, dbcall.JSON(result), message)
	if err != nil {
		return fmt.Errorf("once: resolving operation %s as %s: %w", id, state, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	// Not among the uncertain: say whether it exists at all (a scan: this is the error path).
	var was string
	err = db.QueryRow(ctx, `SELECT state::text FROM once.operations WHERE id = $1::uuid`, id).Scan(&was)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: %s", ErrNoOperation, id)
	case err != nil:
		return fmt.Errorf("once: resolving operation %s as %s: %w", id, state, err)
	}
	return fmt.Errorf("%w: operation %s is %s", ErrNotUncertain, id, was)
}
