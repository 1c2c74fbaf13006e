package once

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// maxStepLen bounds a checkpoint's step name.
const maxStepLen = 128

// checkpointSQL records a checkpoint only while the attempt owns the claim (the insert reads
// from the update's RETURNING), and counts as a sign of life. A step recorded again (an
// attempt that resumed before it) replaces the earlier record.
const checkpointSQL = `WITH op AS (
	UPDATE once.operations SET recovery_point = $5, alive_at = clock_timestamp()
	WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state = 'open'
	RETURNING id
)
INSERT INTO once.checkpoints (operation_id, step, state, attempt)
SELECT id, $5, $6, $7 FROM op
ON CONFLICT (operation_id, step) DO UPDATE
SET state = EXCLUDED.state, attempt = EXCLUDED.attempt, recorded_at = clock_timestamp()
RETURNING 1`

// Checkpoint records, in tx, that step of the operation is done and what it produced
// (state, encoded as JSON; nil for nothing). Call it in the transaction that did the step's
// writes, so that the step and its checkpoint commit together or not at all: a later attempt
// (after a crash, or a retryable failure) then skips the step (Recovered) instead of doing it
// again. Given a pool rather than a transaction, the checkpoint commits on its own.
//
// It is also a sign of life: the claim's stale window starts again. If the attempt no
// longer owns the claim (it was taken over or marked uncertain while it ran) it records
// nothing and returns an error wrapping ErrNotOwner; roll tx back.
func (a *Attempt) Checkpoint(ctx context.Context, tx DB, step string, state any) error {
	if err := checkStep(step); err != nil {
		return fmt.Errorf("operation %s: %w", a.id, err)
	}
	if err := dbcall.DB(tx); err != nil {
		return err
	}
	if memoryOf(tx) != nil || memoryOf(a.db) != nil {
		return memoryRefused("forever", a.call.name, "a checkpoint is written in the transaction that did the step")
	}
	var enc []byte
	if state != nil {
		b, err := json.Marshal(state)
		if err != nil {
			return fmt.Errorf("%w: operation %s: checkpoint %s: state cannot be encoded: %v", ErrInvalid, a.id, step, err)
		}
		enc = b
	}
	var one int
	err := tx.QueryRow(ctx, checkpointSQL, append(a.call.keyArgs(a.token), step, dbcall.JSON(enc), a.number)...).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: operation %s: attempt %d no longer holds the claim; checkpoint %s not recorded", ErrNotOwner, a.id, a.number, step)
	}
	if err != nil {
		return fmt.Errorf("once: operation %s: recording checkpoint %s: %w", a.id, step, err)
	}
	return nil
}

// Recovered reports whether an earlier attempt at the operation recorded step, and if so
// decodes its state into into (which may be nil). A first attempt sends no query.
func (a *Attempt) Recovered(ctx context.Context, step string, into any) (bool, error) {
	if err := checkStep(step); err != nil {
		return false, fmt.Errorf("operation %s: %w", a.id, err)
	}
	if a.recoveryPoint == "" {
		return false, nil // no earlier attempt recorded anything
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.checkpoints == nil {
		rows, err := a.db.Query(ctx, `SELECT step, state FROM once.checkpoints WHERE operation_id = $1::uuid`, a.id)
		if err != nil {
			return false, fmt.Errorf("once: operation %s: reading checkpoints: %w", a.id, err)
		}
		loaded := map[string]json.RawMessage{}
		for rows.Next() {
			var s string
			var st []byte
			if err := rows.Scan(&s, &st); err != nil {
				rows.Close()
				return false, fmt.Errorf("once: operation %s: reading checkpoints: %w", a.id, err)
			}
			loaded[s] = st
		}
		if err := rows.Err(); err != nil {
			return false, fmt.Errorf("once: operation %s: reading checkpoints: %w", a.id, err)
		}
		a.checkpoints = loaded
	}
	st, ok := a.checkpoints[step]
	if !ok {
		return false, nil
	}
	if into != nil && st != nil {
		if err := json.Unmarshal(st, into); err != nil {
			return true, fmt.Errorf("once: operation %s: checkpoint %s cannot be read as %T: %w", a.id, step, into, err)
		}
	}
	return true, nil
}

// heartbeatSQL shows an open attempt's life, only for its own token.
const heartbeatSQL = `UPDATE once.operations SET alive_at = clock_timestamp()
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state = 'open'`

// Heartbeat tells the database the attempt is alive, so a long step (a slow provider call)
// is not taken for a dead holder's once Stale has passed. It returns an error wrapping
// ErrNotOwner if the attempt no longer holds the claim.
func (a *Attempt) Heartbeat(ctx context.Context) error {
	if m := memoryOf(a.db); m != nil {
		return a.memoryHeartbeat(m)
	}
	tag, err := a.db.Exec(ctx, heartbeatSQL, a.call.keyArgs(a.token)...)
	if err != nil {
		return fmt.Errorf("once: operation %s: heartbeat: %w", a.id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: operation %s: attempt %d no longer holds the claim", ErrNotOwner, a.id, a.number)
	}
	return nil
}

// Step runs one recovery point of an operation: if an earlier attempt recorded step, it
// returns the state recorded then, without running fn; otherwise it runs fn in a new
// transaction on db and records fn's result as the step's checkpoint in that same
// transaction, then commits. So a step's writes happen once across every attempt, and a
// retry resumes after the last step that committed.
//
// fn's error rolls the transaction back and is returned as it is.
func Step[S any](ctx context.Context, db DB, a *Attempt, step string, fn func(context.Context, pgx.Tx) (S, error)) (S, error) {
	var s S
	switch {
	case a == nil:
		return s, fmt.Errorf("%w: step %s: nil attempt (run it inside a forever operation)", ErrInvalid, step)
	case fn == nil:
		return s, fmt.Errorf("%w: step %s: nil function", ErrInvalid, step)
	}
	if err := dbcall.DB(db); err != nil {
		return s, err
	}
	if ok, err := a.Recovered(ctx, step, &s); err != nil || ok {
		return s, err
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return s, fmt.Errorf("once: operation %s: step %s: begin: %w", a.id, step, err)
	}
	// Not on ctx: a step failing because ctx was cancelled must still roll back, and pgx
	// closes a connection whose rollback fails, taking a caller's transaction with it.
	defer func() {
		rctx, cancel := dbcall.SettleContext(ctx)
		defer cancel()
		tx.Rollback(rctx) // after a commit, a no-op
	}()
	s, err = fn(ctx, tx)
	if err != nil {
		return s, err
	}
	if err := a.Checkpoint(ctx, tx, step, s); err != nil {
		return s, err
	}
	if err := tx.Commit(ctx); err != nil {
		return s, fmt.Errorf("once: operation %s: step %s: commit: %w", a.id, step, err)
	}
	return s, nil
}

func checkStep(step string) error {
	if step == "" || len(step) > maxStepLen || !utf8.ValidString(step) || strings.ContainsFunc(step, dbcall.IsControl) {
		return fmt.Errorf("%w: checkpoint step %q must be 1 to %d bytes of printable text", ErrInvalid, step, maxStepLen)
	}
	return nil
}
