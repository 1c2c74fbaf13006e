package onceops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
)

// FollowUp is an action to take after an operation settled (email the owner, export the
// report), as a drain delivers it. Follow-ups are enqueued by the operation (once.Attempt.FollowUp)
// in the statement that settles it, so they exist if and only if the operation's outcome is
// recorded; each is delivered at least once, and a failed delivery is retried alone, without
// running the operation again.
type FollowUp struct {
	// ID is the follow-up's row in once.followups.
	ID int64
	// OperationID is the id of the operation that enqueued it.
	OperationID string
	// Operation, Scope and Key are that operation's guard name, scope (account) and key.
	Operation, Scope, Key string
	// Action names what to do; the drain's Deliver map is keyed by it.
	Action string
	// Payload is what the operation gave to FollowUp, as JSON.
	Payload json.RawMessage
	// ProviderKey is the idempotency key to send with the action's effect: the same for every
	// delivery of this follow-up (derived from the operation and the action), so a delivery
	// repeated after a lost answer is deduplicated by a provider that honours keys.
	ProviderKey string
	// Attempt is 1 for the first delivery, more for retries; a delivery a stopping drain
	// handed back is not counted (see Drain.Run). (ReviveFollowUp starts the count again.)
	// For a dead follow-up (ListDeadFollowUps), the deliveries tried.
	Attempt int
	// LastError is the error of the last failed delivery, "" for none.
	LastError string
}

// Drain delivers follow-ups. Run it from a worker loop or a scheduled job; any number of
// drains can run at once (each takes its own rows, FOR UPDATE SKIP LOCKED).
type Drain struct {
	// Deliver maps an action to the function that delivers it. A follow-up whose action has
	// no entry is left pending for a drain that has one. The function gets the follow-up's
	// provider key in its context too (ProviderKeyFrom).
	Deliver map[string]func(context.Context, FollowUp) error
	// Batch is how many follow-ups one statement takes; zero means 100.
	Batch int
	// Backoff is the wait before the first retry of a failed delivery; it doubles for each
	// later one, up to an hour. Zero means 10 seconds.
	Backoff time.Duration
	// MaxAttempts is how many deliveries are tried before a follow-up is marked dead for an
	// operator; zero means 10.
	MaxAttempts int
	// Hold is how long a taken follow-up is hidden from other drains while it is delivered;
	// if the drain dies, another delivers it after Hold (hence "at least once"). Zero means
	// five minutes. Make it longer than a delivery takes.
	Hold time.Duration
}

// DrainResult counts what one Run did. Each count is of outcomes the Run recorded: a
// follow-up it lost to another drain (its delivery outlasted Hold) is in none of them,
// whatever its delivery did, since the other drain records that follow-up's outcome.
type DrainResult struct {
	// Delivered counts the follow-ups delivered.
	Delivered int
	// Failed counts failed deliveries that will be retried.
	Failed int
	// Dead counts follow-ups that failed their last allowed delivery.
	Dead int
	// Released counts the follow-ups handed back, uncounted, because ctx ended: taken and
	// not started, or cut short by ctx (see Drain.Run).
	Released int
}

const followUpTakeSQL = `UPDATE once.followups f
SET attempts = f.attempts + 1, due_at = clock_timestamp() + $3::bigint * interval '1 microsecond'
WHERE f.id IN (
	SELECT id FROM once.followups
	WHERE state = 'pending' AND due_at <= clock_timestamp() AND action = ANY($2::text[])
	ORDER BY due_at, id LIMIT $1
	FOR UPDATE SKIP LOCKED
)
RETURNING ` + followUpSelect

// followUpSelect are the columns scanFollowUps reads.
const followUpSelect = `f.id, f.operation_id::text, f.operation, f.scope, f.key, f.action, f.payload, f.provider_key, f.attempts,
	coalesce(f.last_error, '')`

// The outcome of a delivery is recorded only by the drain that took the follow-up (its
// attempts count is the proof): a drain that held it too long and lost it to another
// changes nothing, and gets no row back.
//
// A follow-up delivered after its operation was deleted (expired, reaped or claimed anew
// while the follow-up was still owed) is deleted rather than marked delivered: ReapExpired
// deletes delivered follow-ups with their operation, and this one's is gone already. The
// update reads the delete's result and so changes nothing when the delete took the row.
// Either one is this drain's mark; the statement says whether there was one.
const followUpDeliveredSQL = `WITH orphan AS (
	DELETE FROM once.followups f WHERE f.id = $1 AND f.attempts = $2 AND f.state = 'pending'
		AND NOT EXISTS (SELECT 1 FROM once.operations o WHERE o.name = f.operation AND o.scope = f.scope AND o.key = f.key AND o.id = f.operation_id)
	RETURNING 1
), marked AS (
	UPDATE once.followups SET state = 'delivered', delivered_at = clock_timestamp(), last_error = NULL
	WHERE id = $1 AND attempts = $2 AND state = 'pending' AND NOT EXISTS (SELECT 1 FROM orphan)
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM orphan) OR EXISTS (SELECT 1 FROM marked)`

const followUpFailedSQL = `UPDATE once.followups
SET last_error = $3, due_at = clock_timestamp() + $4::bigint * interval '1 microsecond',
	state = CASE WHEN attempts >= $5 THEN 'dead' ELSE 'pending' END
WHERE id = $1 AND attempts = $2 AND state = 'pending'
RETURNING state`

// followUpReleaseSQL hands back follow-ups this drain took ($1 ids, $2 their attempts) and
// did not deliver: the take's attempt is taken back and they are due at once. The attempts
// count still proves the hold: one that another drain took over meanwhile has a higher count
// and is left alone. (Handing back restores a count that a drain whose own hold expired
// earlier may still hold; its record is then the only one, and true, since no other drain
// holds the follow-up.)
const followUpReleaseSQL = `UPDATE once.followups f SET attempts = f.attempts - 1, due_at = clock_timestamp()
FROM unnest($1::bigint[], $2::integer[]) AS t(id, attempts)
WHERE f.id = t.id AND f.attempts = t.attempts AND f.state = 'pending'`

// Run delivers the follow-ups that are due, batch after batch, until none is left due or
// ctx ends. Each delivery that fails is retried by a later Run, after Backoff; each that
// succeeds is marked delivered. An error is returned only for the database; a delivery's
// error is recorded in the follow-up's last_error.
//
// Ending ctx stops the drain (a deploy, a shutdown), and what the stop interrupted is not
// counted against MaxAttempts, so stops however frequent never make a follow-up dead: the
// follow-ups of the batch not yet started are handed back, due again at once with their
// attempt not counted, and so is a delivery the stop cut short. That one is known by its
// error: it wraps ctx's error (context.Canceled, or context.DeadlineExceeded from ctx's own
// deadline) and was returned after ctx ended. It may have had its effect before it was cut
// short; the next delivery sends the same provider key. Any other error is the delivery's
// own failure and is counted even if ctx ended meanwhile, as is a deadline the delivery set
// itself; a delivery that succeeded is marked delivered. So a delivery that always outlasts
// ctx's deadline is handed back every time and never dies: give Run a context that ends
// when the process stops, and bound each delivery's time inside Deliver. The statements
// that record outcomes and hand follow-ups back run after ctx ended, each with a timeout
// of its own.
func (d Drain) Run(ctx context.Context, db once.DB) (DrainResult, error) {
	var res DrainResult
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return res, err
	}
	batch, backoff, maxAttempts, hold := d.Batch, d.Backoff, d.MaxAttempts, d.Hold
	switch {
	case batch < 0 || backoff < 0 || maxAttempts < 0 || hold < 0:
		return res, fmt.Errorf("%w: drain: negative Batch, Backoff, MaxAttempts or Hold", dbcall.ErrInvalid)
	case len(d.Deliver) == 0:
		return res, fmt.Errorf("%w: drain: no Deliver functions", dbcall.ErrInvalid)
	}
	if batch == 0 {
		batch = 100
	}
	if backoff == 0 {
		backoff = 10 * time.Second
	}
	if maxAttempts == 0 {
		maxAttempts = 10
	}
	if hold == 0 {
		hold = 5 * time.Minute
	}
	actions := make([]string, 0, len(d.Deliver))
	for a, fn := range d.Deliver {
		if fn == nil {
			return res, fmt.Errorf("%w: drain: nil Deliver function for %q", dbcall.ErrInvalid, a)
		}
		actions = append(actions, a)
	}
	slices.Sort(actions)
	for ctx.Err() == nil {
		taken, err := takeFollowUps(ctx, db, batch, actions, hold)
		if err != nil {
			return res, err
		}
		for i, f := range taken {
			if ctx.Err() != nil {
				err := releaseFollowUps(ctx, db, taken[i:], &res)
				return res, err
			}
			if err := d.deliver(ctx, db, f, backoff, maxAttempts, &res); err != nil {
				return res, err
			}
		}
		if len(taken) < batch {
			break
		}
	}
	return res, nil
}

func takeFollowUps(ctx context.Context, db once.DB, batch int, actions []string, hold time.Duration) ([]FollowUp, error) {
	rows, err := db.Query(ctx, followUpTakeSQL, batch, actions, dbcall.Micros(hold))
	if err != nil {
		return nil, fmt.Errorf("once: drain: taking follow-ups: %w", err)
	}
	defer rows.Close()
	taken, err := scanFollowUps(rows)
	if err != nil {
		return nil, fmt.Errorf("once: drain: taking follow-ups: %w", err)
	}
	return taken, nil
}

// scanFollowUps reads rows of followUpSelect, and closes rows.
func scanFollowUps(rows pgx.Rows) ([]FollowUp, error) {
	defer rows.Close()
	var list []FollowUp
	for rows.Next() {
		var f FollowUp
		var payload []byte
		if err := rows.Scan(&f.ID, &f.OperationID, &f.Operation, &f.Scope, &f.Key, &f.Action, &payload, &f.ProviderKey, &f.Attempt,
			&f.LastError); err != nil {
			return nil, err
		}
		if payload != nil {
			f.Payload = json.RawMessage(payload)
		}
		list = append(list, f)
	}
	return list, rows.Err()
}

// ErrNoFollowUp: no follow-up has that id.
var ErrNoFollowUp = errors.New("once: no such follow-up")

// ErrNotDead: a follow-up an operator asked to revive is not dead (it is pending, or was
// delivered). Nothing was changed.
var ErrNotDead = errors.New("once: follow-up is not dead")

// ListDeadFollowUps lists the follow-ups that failed their last allowed delivery, oldest
// first, with the error of that delivery (LastError), for an operator to mend what failed
// and revive them (ReviveFollowUp). action "" lists every action's; limit 0 means 100.
func ListDeadFollowUps(ctx context.Context, db once.DB, action string, limit int) ([]FollowUp, error) {
	limit, err := checkList(ctx, db, limit)
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT `+followUpSelect+`
FROM once.followups f WHERE f.state = 'dead' AND ($1 = '' OR f.action = $1)
ORDER BY f.created_at, f.id LIMIT $2`, action, limit)
	if err != nil {
		return nil, fmt.Errorf("once: listing dead follow-ups: %w", err)
	}
	list, err := scanFollowUps(rows)
	if err != nil {
		return nil, fmt.Errorf("once: listing dead follow-ups: %w", err)
	}
	return list, nil
}

// ReviveFollowUp gives a dead follow-up another round of deliveries: it is pending again,
// due now, with its attempt count started again (a drain's MaxAttempts applies anew), its
// last error kept until a delivery succeeds. Use it once what made the deliveries fail is
// mended (an address corrected, a provider back). The follow-up keeps its provider key, so a
// provider that honours keys still does its effect at most once. A follow-up that is not dead
// is left as it is: ErrNotDead.
func ReviveFollowUp(ctx context.Context, db once.DB, id int64) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	var was string
	err := db.QueryRow(ctx, `WITH target AS (SELECT id, state FROM once.followups WHERE id = $1 FOR UPDATE),
revived AS (
	UPDATE once.followups f SET state = 'pending', attempts = 0, due_at = clock_timestamp()
	FROM target WHERE f.id = target.id AND target.state = 'dead'
)
SELECT target.state FROM target`, id).Scan(&was)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: %d", ErrNoFollowUp, id)
	case err != nil:
		return fmt.Errorf("once: reviving follow-up %d: %w", id, err)
	case was != "dead":
		return fmt.Errorf("%w: follow-up %d is %s", ErrNotDead, id, was)
	}
	return nil
}

// releaseFollowUps hands back follow-ups the drain took and will not deliver, because ctx
// ended, and counts those it still held.
func releaseFollowUps(ctx context.Context, db once.DB, fs []FollowUp, res *DrainResult) error {
	ids := make([]int64, len(fs))
	attempts := make([]int32, len(fs))
	for i, f := range fs {
		ids[i], attempts[i] = f.ID, int32(f.Attempt)
	}
	sctx, cancel := dbcall.SettleContext(ctx)
	defer cancel()
	tag, err := db.Exec(sctx, followUpReleaseSQL, ids, attempts)
	if err != nil {
		return fmt.Errorf("once: drain: handing back %d follow-ups: %w", len(fs), err)
	}
	res.Released += int(tag.RowsAffected())
	return nil
}

// cutShort says whether a delivery's error is ctx's own, returned after ctx ended: the
// drain's stop interrupted the delivery, rather than the delivery failing.
func cutShort(ctx context.Context, derr error) bool {
	cerr := ctx.Err()
	return cerr != nil && (errors.Is(derr, cerr) || errors.Is(derr, context.Cause(ctx)))
}

// deliver delivers one follow-up and records how it went. A panic in the delivery function
// is not recovered: the follow-up stays held, and is delivered again after Hold.
func (d Drain) deliver(ctx context.Context, db once.DB, f FollowUp, backoff time.Duration, maxAttempts int, res *DrainResult) error {
	derr := d.Deliver[f.Action](once.WithProviderKey(ctx, f.ProviderKey), f)
	if derr != nil && cutShort(ctx, derr) {
		return releaseFollowUps(ctx, db, []FollowUp{f}, res)
	}
	sctx, cancel := dbcall.SettleContext(ctx)
	defer cancel()
	if derr == nil {
		var marked bool
		if err := db.QueryRow(sctx, followUpDeliveredSQL, f.ID, f.Attempt).Scan(&marked); err != nil {
			return fmt.Errorf("once: drain: recording follow-up %d delivered: %w", f.ID, err)
		}
		if marked {
			res.Delivered++
		}
		return nil
	}
	wait := backoff
	for i := 1; i < f.Attempt && wait < time.Hour; i++ {
		wait *= 2
	}
	wait = min(wait, time.Hour)
	var state string
	err := db.QueryRow(sctx, followUpFailedSQL, f.ID, f.Attempt, dbcall.Reason(derr.Error()), dbcall.Micros(wait), maxAttempts).Scan(&state)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // another drain took it over meanwhile, and records it
	case err != nil:
		return fmt.Errorf("once: drain: recording follow-up %d failed: %w", f.ID, err)
	case state == "dead":
		res.Dead++
	default:
		res.Failed++
	}
	return nil
}
