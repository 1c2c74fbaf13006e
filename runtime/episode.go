package once

import (
	"context"
	"errors"
	"fmt"

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
type Episode struct {
	// Name identifies the guard; a latch is per Name and key.
	Name string
}

// fireSQL sets the latch where it is armed (no row yet, or fired_at NULL), with the token of
// the call that fires it, and returns the episode's number; a latch already set returns no
// row.
//
// ON CONFLICT .. DO UPDATE locks the conflicting row even when its WHERE refuses the update,
// and the lock writes WAL: under a storm on a set latch every duplicate would queue on the
// one row. So the insert proposes no row when the latch, read in the statement's snapshot
// (a plain read: no lock, nothing written), is already set: such a duplicate meets no
// conflict and takes no lock. It is a duplicate at that snapshot, a moment during the call; a
// rearm committed since only ends the episode after the call saw it. A latch read as armed
// (or absent) is set by the upsert under the row's lock, against the newest committed latch,
// so one episode fires once whatever the snapshot read: the read can only answer duplicate,
// never fire.
const fireSQL = `INSERT INTO once.latches AS l (name, key, fired_at, firings, token)
SELECT $1::text, $2::text, clock_timestamp(), 1, $3::text
WHERE NOT EXISTS (SELECT FROM once.latches WHERE name = $1::text AND key = $2::text AND fired_at IS NOT NULL)
ON CONFLICT (name, key) DO UPDATE SET fired_at = clock_timestamp(), firings = l.firings + 1, token = EXCLUDED.token
WHERE l.fired_at IS NULL
RETURNING firings`

// unfireSQL rearms the latch if the firing of token still holds it: a Rearm and a new firing
// since are left alone.
const unfireSQL = `UPDATE once.latches SET fired_at = NULL, rearmed_at = clock_timestamp()
WHERE name = $1 AND key = $2 AND token = $3 AND fired_at IS NOT NULL`

// Do fires the key's latch and, if this call fired it, runs fn. If fn returns an error (or
// panics) the latch is rearmed, but only if it still holds this firing (a Rearm and a new
// firing in between are left alone), so the next attempt fires again: an alert that failed
// to send was not sent. If the latch was already set, fn does not run and Do returns
// Outcome{Status: Duplicate}. Outcome.Firing is the episode's number (once.latches.firings).
//
// A firing whose answer ctx cut off (it may have landed or not) is undone the same way, at
// once, on a short context of its own, once the server process that ran it has ended; Do
// then returns the context's error. Where that clean-up cannot reach the database, the latch
// stays set until a Rearm.
func (g Episode) Do(ctx context.Context, db DB, key string, fn func(context.Context) error) (Outcome, error) {
	if err := checkGuardCall(ctx, db, "episode", g.Name, key); err != nil {
		return Outcome{}, err
	}
	if fn == nil {
		return Outcome{}, invalid("episode", g.Name, "nil function")
	}
	if m := memoryOf(db); m != nil {
		return g.memoryDo(ctx, m, key, fn)
	}
	token := newToken()
	var firing int64
	site, err := sendClaim(ctx, db, func(cdb DB) error {
		return cdb.QueryRow(ctx, fireSQL, g.Name, key, token).Scan(&firing)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		countAnswered(db, "episode", g.Name, Duplicate)
		return Outcome{Status: Duplicate}, nil
	}
	if err != nil {
		err = fmt.Errorf("once: episode guard %s: fire: %w", g.Name, err)
		return Outcome{}, classify(resolveClaim(ctx, db, site, err, g.withdrawUnseen(key, token)))
	}
	out := Outcome{Status: Ran, Firing: firing}
	err = callUndoing(ctx, fn, func(sctx context.Context, _ error) error {
		if _, err := db.Exec(sctx, unfireSQL, g.Name, key, token); err != nil {
			return fmt.Errorf("once: episode guard %s: rearming after the function failed: %w", g.Name, err)
		}
		return nil
	})
	return out, err
}

// withdrawUnseen rearms the latch fired under token, whose answer its caller did not see.
func (g Episode) withdrawUnseen(key, token string) withdrawal {
	return func(ctx context.Context, db DB) (bool, error) {
		tag, err := db.Exec(ctx, unfireSQL, g.Name, key, token)
		if err != nil {
			return false, fmt.Errorf("once: episode guard %s: rearming an unseen firing: %w", g.Name, err)
		}
		return withdrew(tag.RowsAffected()), nil
	}
}

// Rearm ends the key's episode: the next Do fires again. It reports whether the latch was
// set (false: it was already armed, or the key never fired). Call it where the code sees
// the condition clear (the source answers again, the payment went through).
func (g Episode) Rearm(ctx context.Context, db DB, key string) (rearmed bool, err error) {
	if err := checkGuardCall(ctx, db, "episode", g.Name, key); err != nil {
		return false, err
	}
	if m := memoryOf(db); m != nil {
		return g.memoryRearm(m, key), nil
	}
	tag, err := db.Exec(ctx, `UPDATE once.latches SET fired_at = NULL, rearmed_at = clock_timestamp()
WHERE name = $1 AND key = $2 AND fired_at IS NOT NULL`, g.Name, key)
	if err != nil {
		return false, fmt.Errorf("once: episode guard %s: rearm: %w", g.Name, err)
	}
	return tag.RowsAffected() == 1, nil
}
