package once

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultStale is the stale window of an Open guard whose Stale is zero: an open claim older
// than this is taken to have lost its worker.
const DefaultStale = 20 * time.Minute

// maxClaimAttempts bounds the claim loop. Each extra attempt follows a claim that was closed
// between our insert and our read (settled, or closed as stale); more than a few in a
// row means something keeps closing claims as fast as they open.
const maxClaimAttempts = 8

// Open is the promise "once while the work is open; again after it finishes": one research
// run per organisation at a time, one export job per file while it is queued or running.
// A second caller while the work is open does not start it again but gets the open claim's
// handle, to redirect to the run already started; once the claim is done or failed, the next
// caller starts new work.
//
// Claims live in once.open_claims, at most one open per Name and key by a partial unique
// index. A worker that dies leaves its claim open; every claim on the key closes such a
// claim as stale once it is older than Stale, and SweepStale does the same for a whole
// guard, so no key stays blocked by a process that no longer exists.
type Open[T any] struct {
	// Name identifies the guard; claims are per Name and key.
	Name string
	// Stale is how long a claim may stay open before a later claim closes it as stale. Zero
	// means DefaultStale. Make it longer than the work ever legitimately takes.
	Stale time.Duration
}

// Claim is an open claim: the right to do the work for one key, until it is finished,
// failed, or closed as stale. Its Token proves ownership: Finish, Fail and Open act only for
// the claim's own token.
type Claim struct {
	// ID is the claim's row in once.open_claims.
	ID int64
	// Name and Key are the guard and key claimed.
	Name, Key string
	// Token is the owner's secret, stored in the row.
	Token string
}

// claimSQL is the common path, one statement: the insert is the check. The conflict
// predicate is the index predicate, as a literal and text-identical (a parameter there
// cannot be matched to the index once the plan is generic).
const claimSQL = `INSERT INTO once.open_claims (name, key, token) VALUES ($1, $2, $3)
ON CONFLICT (name, key) WHERE state = 'open' DO NOTHING
RETURNING id`

// openClaimSQL answers a conflict: it closes the key's open claim if it is stale, and returns
// the open claim with whether it is past the stale window. The cutoff is read once, so the
// update and the answer agree on it.
//
// The answer reads the snapshot the statement started with, so a stale claim comes back
// still open, whoever closed it: this statement's update, or another caller's that committed
// while this one waited for the row. Either way it is closed now, and the caller claims
// again; it must not be told to redirect to it.
const openClaimSQL = `WITH cutoff AS MATERIALIZED (
	SELECT clock_timestamp() - $3::bigint * interval '1 microsecond' AS t
), stale AS (
	UPDATE once.open_claims SET state = 'stale', closed_at = clock_timestamp(), reason = $4
	WHERE name = $1 AND key = $2 AND state = 'open' AND opened_at <= (SELECT t FROM cutoff)
)
SELECT c.id, c.opened_at <= cutoff.t
FROM once.open_claims c, cutoff WHERE c.name = $1 AND c.key = $2 AND c.state = 'open'`

// Claim opens a claim on key that outlives the call: for work handed to a job queue, where
// a worker settles it later with Finish or Fail. If another claim on the key is open (and not
// stale), it returns a nil Claim and Outcome{Status: InFlight, Handle: that claim's ID}, with a
// nil error. A new claim returns Outcome{Status: Ran, Handle: its ID}.
//
// On a fresh key this is one statement. Only a conflict costs a second, which also closes
// the conflicting claim if it is stale.
func (g Open[T]) Claim(ctx context.Context, db DB, key string) (*Claim, Outcome, error) {
	if err := checkGuardCall(ctx, db, "open", g.Name, key); err != nil {
		return nil, Outcome{}, err
	}
	stale, err := g.stale()
	if err != nil {
		return nil, Outcome{}, err
	}
	token := newToken()
	for range maxClaimAttempts {
		var id int64
		site, err := sendClaim(ctx, db, func(cdb DB) error { return cdb.QueryRow(ctx, claimSQL, g.Name, key, token).Scan(&id) })
		if err == nil {
			c := &Claim{ID: id, Name: g.Name, Key: key, Token: token}
			return c, Outcome{Status: Ran, Handle: strconv.FormatInt(id, 10)}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			err = fmt.Errorf("once: open guard %s: claim: %w", g.Name, err)
			return nil, Outcome{}, classify(resolveClaim(ctx, db, site, err, withdrawOpen(g.Name, key, token)))
		}
		var wasStale bool
		err = db.QueryRow(ctx, openClaimSQL, g.Name, key, micros(stale), staleReason(stale)).Scan(&id, &wasStale)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // the open claim was settled in between: claim again
		}
		if err != nil {
			return nil, Outcome{}, fmt.Errorf("once: open guard %s: reading the open claim: %w", g.Name, err)
		}
		if !wasStale {
			return nil, Outcome{Status: InFlight, Handle: strconv.FormatInt(id, 10)}, nil
		}
		// Closed as stale, by this statement or a concurrent one: claim again.
	}
	return nil, Outcome{}, fmt.Errorf("once: open guard %s: key %q: claims kept closing during %d attempts to claim", g.Name, key, maxClaimAttempts)
}

// Do claims key and, if the claim is new, runs fn with the claim in its context (ClaimFrom),
// then settles it: done when fn returns nil, failed (with fn's error as the reason) when it
// returns an error or panics. If another claim on the key is open, fn does not run and Do
// returns Outcome{Status: InFlight, Handle: the open claim's ID} with a nil error.
//
// If the claim was closed as stale while fn ran (fn took longer than Stale), the settle
// finds it no longer open and Do returns fn's result with an error wrapping ErrNotOwner: the
// work ran, but another caller may have started the same work meanwhile.
func (g Open[T]) Do(ctx context.Context, db DB, key string, fn func(context.Context) (T, error)) (T, Outcome, error) {
	var zero T
	if fn == nil {
		return zero, Outcome{}, invalid("open", g.Name, "nil function")
	}
	c, out, err := g.Claim(ctx, db, key)
	if err != nil || c == nil {
		return zero, out, err
	}
	v, err := callUndoing(context.WithValue(ctx, claimKey, c), fn, func(sctx context.Context, ferr error) error {
		return c.Fail(sctx, db, ferr.Error())
	})
	if err != nil {
		return v, out, err
	}
	sctx, cancel := settleContext(ctx)
	defer cancel()
	return v, out, c.Finish(sctx, db)
}

func (g Open[T]) stale() (time.Duration, error) {
	switch {
	case g.Stale < 0:
		return 0, invalid("open", g.Name, "negative stale window %v", g.Stale)
	case g.Stale == 0:
		return DefaultStale, nil
	}
	return g.Stale, nil
}

func staleReason(stale time.Duration) string {
	return "open longer than the stale window (" + stale.String() + ")"
}

// ClaimFrom returns the open claim a guard put in ctx: inside an Open guard's function, the
// claim it runs under (its ID is the handle duplicates are redirected to).
func ClaimFrom(ctx context.Context) (*Claim, bool) {
	c, ok := ctx.Value(claimKey).(*Claim)
	return c, ok
}

// Finish marks the claim done. It acts only on the claim's own row while it is open with the
// claim's token; otherwise (closed as stale and perhaps claimed again by another worker,
// already settled) it changes nothing and returns ErrNotOwner.
func (c *Claim) Finish(ctx context.Context, db DB) error {
	return c.settle(ctx, db, "done", nil)
}

// Fail marks the claim failed, keeping reason for the operator. Like Finish, it acts only on
// the claim's own open row and otherwise returns ErrNotOwner.
func (c *Claim) Fail(ctx context.Context, db DB, reason string) error {
	reason = reasonText(reason)
	return c.settle(ctx, db, "failed", &reason)
}

func (c *Claim) settle(ctx context.Context, db DB, state string, reason *string) error {
	if err := c.check(ctx, db); err != nil {
		return err
	}
	tag, err := db.Exec(ctx, `UPDATE once.open_claims SET state = $3, closed_at = clock_timestamp(), reason = $4
WHERE id = $1 AND token = $2 AND state = 'open'`, c.ID, c.Token, state, reason)
	if err != nil {
		return fmt.Errorf("once: open guard %s: claim %d: marking %s: %w", c.Name, c.ID, state, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("once: open guard %s: claim %d is no longer open (closed as stale, or settled already): %w", c.Name, c.ID, ErrNotOwner)
	}
	return nil
}

// Open reports whether the claim is still open. A job calls it first: work whose claim was
// closed as stale while it waited in a queue has nobody waiting for it, and another claim may
// already be doing it, so the job should return without spending anything.
func (c *Claim) Open(ctx context.Context, db DB) (bool, error) {
	if err := c.check(ctx, db); err != nil {
		return false, err
	}
	var open bool
	err := db.QueryRow(ctx, "SELECT state = 'open' FROM once.open_claims WHERE id = $1 AND token = $2", c.ID, c.Token).Scan(&open)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // the row is gone (an operator removed it): not open for this claim
	}
	if err != nil {
		return false, fmt.Errorf("once: open guard %s: claim %d: %w", c.Name, c.ID, err)
	}
	return open, nil
}

func (c *Claim) check(ctx context.Context, db DB) error {
	if c == nil {
		return fmt.Errorf("%w: nil claim", ErrInvalid)
	}
	return checkGuardHandle(ctx, db, "open", c.Name)
}

// SweepStale closes as stale every claim of the guard name that has been open longer than
// stale, and returns how many it closed. Claims close themselves this way whenever their key
// is claimed again; a sweep (at start-up, on a timer, from an operator) also closes those
// on keys nobody asks for again, so that reports of open work are true.
func SweepStale(ctx context.Context, db DB, name string, stale time.Duration) (closed int64, err error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	if err := checkGuardHandle(ctx, db, "open", name); err != nil {
		return 0, err
	}
	if stale <= 0 {
		return 0, invalid("open", name, "sweep with a non-positive stale window %v", stale)
	}
	tag, err := db.Exec(ctx, `UPDATE once.open_claims SET state = 'stale', closed_at = clock_timestamp(), reason = $3
WHERE name = $1 AND state = 'open' AND opened_at <= clock_timestamp() - $2::bigint * interval '1 microsecond'`,
		name, micros(stale), staleReason(stale))
	if err != nil {
		return 0, fmt.Errorf("once: open guard %s: sweep: %w", name, err)
	}
	return tag.RowsAffected(), nil
}
