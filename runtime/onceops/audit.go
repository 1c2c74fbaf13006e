package onceops

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
)

// Audit is who takes an operator's action and why. Its methods are the operator actions,
// each made in one transaction with its row in once.audit (actor, action, target, reason,
// and the row as it was before and after), so an action taken through them is never
// without its record, and a record is never without its action. Actor and Reason are
// required.
type Audit struct {
	// Actor names who acts: a user name, or a job's.
	Actor string
	// Reason says why, as the operator gave it.
	Reason string
}

// AuditEntry is a row of once.audit.
type AuditEntry struct {
	ID                            int64
	At                            time.Time
	Actor, Action, Target, Reason string
	// Before and After are the target's row (JSON, its tokens left out) before and after
	// the action; nil where there was none.
	Before, After []byte
}

// The snapshots of each kind of target, read in the action's transaction before and after
// it: the row as an operator reads it, its owner's token left out (a token is proof of a
// holder, not something to show), and an operation's result kept at rest in another form
// (sealed, a digest) shown by its form only.
const (
	operationSnapshot = `SELECT (to_jsonb(o) - 'token' - 'result') || jsonb_build_object('result',
	CASE WHEN o.result_form IS NULL THEN o.result::jsonb ELSE to_jsonb(o.result_form) END)
FROM once.operations o WHERE name = $1 AND scope = $2 AND key = $3`
	claimSnapshot    = `SELECT to_jsonb(c) - 'token' FROM once.open_claims c WHERE id = $1`
	latchSnapshot    = `SELECT to_jsonb(l) - 'token' FROM once.latches l WHERE name = $1 AND key = $2`
	leaseSnapshot    = `SELECT to_jsonb(l) - 'holder' FROM once.leases l WHERE name = $1 AND key = $2`
	followUpSnapshot = `SELECT to_jsonb(f) FROM once.followups f WHERE id = $1`
	counterSnapshot  = `SELECT jsonb_build_object('name', $1::text, 'key', $2::text, 'used', count(*))
FROM once.counter_slots WHERE name = $1 AND key = $2`
)

// do runs change in a transaction with the audit row of action on target, the target's
// snapshot (snapshotSQL with args) read before and after it.
func (a Audit) do(ctx context.Context, db once.DB, action, target, snapshotSQL string, args []any, change func(tx pgx.Tx) error) error {
	return a.doWith(ctx, db, action, target, func(tx pgx.Tx) ([]byte, error) {
		var b []byte
		err := tx.QueryRow(ctx, snapshotSQL, args...).Scan(&b)
		if noRows(err) {
			return nil, nil
		}
		return b, err
	}, change)
}

// doWith is do with a snapshot function of its own.
func (a Audit) doWith(ctx context.Context, db once.DB, action, target string, snapshot func(tx pgx.Tx) ([]byte, error), change func(tx pgx.Tx) error) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	switch {
	case a.Actor == "":
		return fmt.Errorf("%w: %s of %s: no actor", dbcall.ErrInvalid, action, target)
	case a.Reason == "":
		return fmt.Errorf("%w: %s of %s: no reason", dbcall.ErrInvalid, action, target)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("once: %s of %s: %w", action, target, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	before, err := snapshot(tx)
	if err != nil {
		return fmt.Errorf("once: %s of %s: reading the row before: %w", action, target, err)
	}
	if err := change(tx); err != nil {
		return err
	}
	after, err := snapshot(tx)
	if err != nil {
		return fmt.Errorf("once: %s of %s: reading the row after: %w", action, target, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO once.audit (actor, action, target, reason, before, after)
VALUES ($1, $2, $3, $4, $5, $6)`, a.Actor, action, target, a.Reason, dbcall.JSON(before), dbcall.JSON(after)); err != nil {
		return fmt.Errorf("once: %s of %s: writing its audit row: %w", action, target, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("once: %s of %s: %w", action, target, err)
	}
	return nil
}

// resolveAudited resolves the uncertain operation id with resolve, audited. The operation's
// row is found by id among the uncertain ones (their index) and read by its primary key
// after; an id that is not uncertain is left to resolve to refuse.
func (a Audit) resolveAudited(ctx context.Context, db once.DB, action, id string, resolve func(tx pgx.Tx) error) error {
	var pk []any
	snapshot := func(tx pgx.Tx) ([]byte, error) {
		if pk == nil {
			if !dbcall.IsUUID(id) {
				return nil, nil
			}
			var name, scope, key string
			err := tx.QueryRow(ctx, `SELECT name, scope, key FROM once.operations
WHERE id = $1::uuid AND uncertain_since IS NOT NULL AND state = 'uncertain' FOR UPDATE`, id).Scan(&name, &scope, &key)
			if noRows(err) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			pk = []any{name, scope, key}
		}
		var b []byte
		err := tx.QueryRow(ctx, operationSnapshot, pk...).Scan(&b)
		if noRows(err) {
			return nil, nil
		}
		return b, err
	}
	return a.doWith(ctx, db, action, "operation "+id, snapshot, resolve)
}

// ResolveDone is ResolveDone, audited.
func (a Audit) ResolveDone(ctx context.Context, db once.DB, id string, result any) error {
	return a.resolveAudited(ctx, db, "resolve done", id, func(tx pgx.Tx) error { return ResolveDone(ctx, tx, id, result) })
}

// ResolveFailed is ResolveFailed, audited.
func (a Audit) ResolveFailed(ctx context.Context, db once.DB, id, message string) error {
	return a.resolveAudited(ctx, db, "resolve failed", id, func(tx pgx.Tx) error { return ResolveFailed(ctx, tx, id, message) })
}

// ResolveRetry is ResolveRetry, audited.
func (a Audit) ResolveRetry(ctx context.Context, db once.DB, id string) error {
	return a.resolveAudited(ctx, db, "resolve retry", id, func(tx pgx.Tx) error { return ResolveRetry(ctx, tx, id) })
}

// CloseClaim is CloseClaim, audited; the audit's reason is the claim's.
func (a Audit) CloseClaim(ctx context.Context, db once.DB, id int64) error {
	return a.do(ctx, db, "close claim", "claim "+strconv.FormatInt(id, 10), claimSnapshot, []any{id}, func(tx pgx.Tx) error {
		return CloseClaim(ctx, tx, id, a.Reason)
	})
}

// Rearm is Rearm, audited. A latch that was not set is not an error: the audit row records
// that nothing changed (before and after alike).
func (a Audit) Rearm(ctx context.Context, db once.DB, name, key string) (rearmed bool, err error) {
	err = a.do(ctx, db, "rearm", "latch "+name+" "+strconv.Quote(key), latchSnapshot, []any{name, key}, func(tx pgx.Tx) error {
		var err error
		rearmed, err = Rearm(ctx, tx, name, key)
		return err
	})
	return rearmed, err
}

// Refund is Refund, audited.
func (a Audit) Refund(ctx context.Context, db once.DB, name, key string, n int64) error {
	return a.do(ctx, db, "refund "+strconv.FormatInt(n, 10), "allowance "+name+" "+strconv.Quote(key), counterSnapshot, []any{name, key}, func(tx pgx.Tx) error {
		return Refund(ctx, tx, name, key, n)
	})
}

// ResetAllowance is ResetAllowance, audited.
func (a Audit) ResetAllowance(ctx context.Context, db once.DB, name, key string) (n int64, err error) {
	err = a.do(ctx, db, "reset", "allowance "+name+" "+strconv.Quote(key), counterSnapshot, []any{name, key}, func(tx pgx.Tx) error {
		var err error
		n, err = ResetAllowance(ctx, tx, name, key)
		return err
	})
	return n, err
}

// ForceRelease is ForceRelease, audited.
func (a Audit) ForceRelease(ctx context.Context, db once.DB, name, key string) error {
	return a.do(ctx, db, "force release", "lease "+name+" "+strconv.Quote(key), leaseSnapshot, []any{name, key}, func(tx pgx.Tx) error {
		return ForceRelease(ctx, tx, name, key)
	})
}

// ReviveFollowUp is ReviveFollowUp, audited.
func (a Audit) ReviveFollowUp(ctx context.Context, db once.DB, id int64) error {
	return a.do(ctx, db, "revive", "follow-up "+strconv.FormatInt(id, 10), followUpSnapshot, []any{id}, func(tx pgx.Tx) error {
		return ReviveFollowUp(ctx, tx, id)
	})
}

// ListAudit lists once.audit newest first, those before (at, id) when before is not zero
// (keyset pagination), limit of them (0 means 100); target "" lists every target's.
func ListAudit(ctx context.Context, db once.DB, target string, beforeID int64, limit int) ([]AuditEntry, error) {
	limit, err := checkList(ctx, db, limit)
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT id, at, actor, action, target, reason, before, after FROM once.audit
WHERE ($1 = '' OR target = $1) AND ($2 = 0 OR id < $2) ORDER BY id DESC LIMIT $3`, target, beforeID, limit)
	if err != nil {
		return nil, fmt.Errorf("once: listing the audit: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditEntry, error) {
		var e AuditEntry
		err := r.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.Target, &e.Reason, &e.Before, &e.After)
		return e, err
	})
}
