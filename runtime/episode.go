package once

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Episode is the promise "once per episode, until something rearms it": an alert sent when a
// paid source runs out of credit, and not again until the source has recovered and the latch
// was rearmed. A per-day guard is the wrong length for this (it rearms itself at midnight
// and repeats, or stays silent about a second outage the same day); the episode ends when
// the code that sees recovery says so, with Rearm.
//
// The latch is once.latches.fired_at, set only where it is NULL. A row back from that write
// means "this call fired it", which stays true inside one transaction: a second call in the
// same transaction finds the latch set and gets no row. (Comparing the stored time with
// now() would not: now() is the same for the whole transaction, so it would say yes twice.)
type Episode[T any] struct {
	// Name identifies the guard; a latch is per Name and key.
	Name string
}

// fireSQL sets the latch where it is armed (no row yet, or fired_at NULL) and returns the
// episode's number; a latch already set returns no row.
const fireSQL = `INSERT INTO once.latches AS l (name, key, fired_at, firings)
VALUES ($1, $2, clock_timestamp(), 1)
ON CONFLICT (name, key) DO UPDATE SET fired_at = clock_timestamp(), firings = l.firings + 1
WHERE l.fired_at IS NULL
RETURNING firings`

// Do fires the key's latch and, if this call fired it, runs fn. If fn returns an error (or
// panics) the latch is rearmed, but only if it still holds this firing (a Rearm and a new
// firing in between are left alone), so the next attempt fires again: an alert that failed
// to send was not sent. If the latch was already set, fn does not run and Do returns
// Outcome{Status: Duplicate}. Outcome.Handle is the episode's number (once.latches.firings).
func (g Episode[T]) Do(ctx context.Context, db DB, key string, fn func(context.Context) (T, error)) (T, Outcome, error) {
	var zero T
	if err := checkGuardCall(ctx, db, "episode", g.Name, key); err != nil {
		return zero, Outcome{}, err
	}
	if fn == nil {
		return zero, Outcome{}, invalid("episode", g.Name, "nil function")
	}
	var firing int64
	err := db.QueryRow(ctx, fireSQL, g.Name, key).Scan(&firing)
	if errors.Is(err, pgx.ErrNoRows) {
		return zero, Outcome{Status: Duplicate}, nil
	}
	if err != nil {
		return zero, Outcome{}, classifyAnswered(fmt.Errorf("once: episode guard %s: fire: %w", g.Name, err))
	}
	out := Outcome{Status: Ran, Handle: strconv.FormatInt(firing, 10)}
	v, err := callUndoing(ctx, fn, func(sctx context.Context, _ error) error { return g.unfire(sctx, db, key, firing) })
	return v, out, err
}

// unfire rearms the latch if it still holds firing.
func (g Episode[T]) unfire(ctx context.Context, db DB, key string, firing int64) error {
	_, err := db.Exec(ctx, `UPDATE once.latches SET fired_at = NULL, rearmed_at = clock_timestamp()
WHERE name = $1 AND key = $2 AND firings = $3 AND fired_at IS NOT NULL`, g.Name, key, firing)
	if err != nil {
		return fmt.Errorf("once: episode guard %s: rearming after the function failed: %w", g.Name, err)
	}
	return nil
}

// Rearm ends the key's episode: the next Do fires again. It reports whether the latch was
// set (false: it was already armed, or the key never fired). Call it where the code sees
// the condition clear (the source answers again, the payment went through).
func (g Episode[T]) Rearm(ctx context.Context, db DB, key string) (rearmed bool, err error) {
	if err := checkGuardCall(ctx, db, "episode", g.Name, key); err != nil {
		return false, err
	}
	tag, err := db.Exec(ctx, `UPDATE once.latches SET fired_at = NULL, rearmed_at = clock_timestamp()
WHERE name = $1 AND key = $2 AND fired_at IS NOT NULL`, g.Name, key)
	if err != nil {
		return false, fmt.Errorf("once: episode guard %s: rearm: %w", g.Name, err)
	}
	return tag.RowsAffected() == 1, nil
}
