package once

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

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
// claim as stale once it has shown no life for its stale window, and onceops.SweepStale
// does the same for a whole guard, so no key stays blocked by a process that no
// longer exists.
//
// A claim carries its own window, the Stale of the guard that made it, counted from its
// last sign of life (its claim, or a heartbeat): whoever finds it judges it by that window,
// not by its own. Do on a *pgxpool.Pool shows a long function's life with a heartbeat, so
// its window is 45 s by default and a dead holder's key is claimed again within a minute;
// a claim that outlives the call (Claim, for a job queue) keeps DefaultStale unless its
// worker calls Claim.Heartbeat.
type Open struct {
	// Name identifies the guard; claims are per Name and key.
	Name string
	// Stale is how long a claim made by this guard may show no life (its claim, a
	// heartbeat) before a later claim closes it as stale. Zero means DefaultHeartbeatStale
	// (45 s) for Do on a *pgxpool.Pool with the heartbeat on, and DefaultStale (20 minutes)
	// otherwise. Without a heartbeat, make it longer than the work ever legitimately takes.
	Stale time.Duration
	// NoHeartbeat turns Do's automatic heartbeat off. By default, when Do's DB is a
	// *pgxpool.Pool, a function still running after Stale/3 (15 s by default) starts showing
	// the claim's life every Stale/3, on a connection of its own from the pool, until it
	// returns; a short function sends no statement for it. If a heartbeat finds the claim
	// closed (as stale, after the heartbeats could not reach the database for Stale), the
	// function's context is cancelled with a cause wrapping ErrNotOwner.
	NoHeartbeat bool
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
const claimSQL = `INSERT INTO once.open_claims (name, key, token, stale_after)
VALUES ($1, $2, $3, $4::bigint * interval '1 microsecond')
ON CONFLICT (name, key) WHERE state = 'open' DO NOTHING
RETURNING id`

// claimOrReadSQL is the claim of a guard whose claims keep meeting open claims: the read of
// the key's open claim and, only when there is none, the insert, in one statement. It
// returns (the new claim's id, true) or (the open claim's id, false, whether it is past its
// stale window). A duplicate is then a plain read, an index probe like the bare insert's
// conflict check: it sends no insert, takes no lock and writes nothing.
//
// The read sees the snapshot the statement started with, a moment during the call: the
// open claim it returns was open then. When it sees none, the insert is the check: a claim
// committed after the snapshot (or being inserted) is a conflict, which DO NOTHING skips
// once its inserter has committed, and no row comes back; the caller claims again, in a
// statement whose snapshot sees that claim.
const claimOrReadSQL = `WITH seen AS (
	SELECT id, ` + staleSQL + ` AS stale
	FROM once.open_claims WHERE name = $1 AND key = $2 AND state = 'open'
), claimed AS (
	INSERT INTO once.open_claims (name, key, token, stale_after)
	SELECT $1::text, $2::text, $3::text, $4::bigint * interval '1 microsecond'
	WHERE NOT EXISTS (SELECT FROM seen)
	ON CONFLICT (name, key) WHERE state = 'open' DO NOTHING
	RETURNING id
)
SELECT id, true, false FROM claimed
UNION ALL
SELECT id, false, stale FROM seen`

// openClaimSQL answers a conflict of claimSQL: the key's open claim, and whether it is past
// its stale window. A plain read: a duplicate takes no lock.
const openClaimSQL = `SELECT id, ` + staleSQL + `
FROM once.open_claims WHERE name = $1 AND key = $2 AND state = 'open'`

// staleSQL is the test of an open claim past its stale window: the claim's own window
// (stale_after, the window of the guard that made it), from its last sign of life.
const staleSQL = `alive_at + stale_after <= clock_timestamp()`

// closeStaleSQL closes an open claim read as stale, if it is still open and still stale: of
// several callers that read it, one closes it; the rest find it closed (waiting for the
// first one's lock, then reading the row it left). All of them claim again. Its reason is
// onceops.SweepStale's.
const closeStaleSQL = `UPDATE once.open_claims SET state = 'stale', closed_at = clock_timestamp(),
	reason = 'no sign of life for longer than the stale window (' || stale_after || ')'
WHERE id = $1 AND state = 'open' AND ` + staleSQL

// openHeartbeatSQL shows an open claim's life, only for its own token while it is open.
const openHeartbeatSQL = `UPDATE once.open_claims SET alive_at = clock_timestamp() WHERE id = $1 AND token = $2 AND state = 'open'`

// Claim opens a claim on key that outlives the call: for work handed to a job queue, where
// a worker settles it later with Finish or Fail. If another claim on the key is open (and not
// stale), it returns a nil Claim and Outcome{Status: InFlight, Holder: that claim's ID}, with
// a nil error. A new claim returns Outcome{Status: Ran, Claim: its ID}. The claim's window is
// Stale, or DefaultStale when Stale is zero: nothing shows its life unless its worker calls
// Claim.Heartbeat.
//
// On a fresh key this is one statement. A claim that meets an open claim also reads its
// handle: in the same statement while the guard keeps meeting open claims, otherwise in a
// second one (see claim_history.go for how a guard chooses). An open claim past its stale
// window is closed, in a statement of its own, and the key claimed again.
func (g Open) Claim(ctx context.Context, db DB, key string) (*Claim, Outcome, error) {
	if err := checkGuardCall(ctx, db, "open", g.Name, key); err != nil {
		return nil, Outcome{}, err
	}
	stale, err := g.stale(false)
	if err != nil {
		return nil, Outcome{}, err
	}
	return g.claim(ctx, db, key, stale)
}

// claim opens a claim whose window is stale, judging an open claim it meets by that claim's.
func (g Open) claim(ctx context.Context, db DB, key string, stale time.Duration) (*Claim, Outcome, error) {
	if m := memoryOf(db); m != nil {
		return g.memoryClaim(m, key, stale)
	}
	token := newToken()
	history := historyIn(&openHistories, g.Name)
	for attempt := range maxClaimAttempts {
		var id int64
		var claimed, wasStale bool
		site, err := sendClaim(ctx, db, func(cdb DB) error {
			var cerr error
			id, claimed, wasStale, cerr = g.claimOrRead(ctx, cdb, key, token, stale, history.readFirst())
			return cerr
		})
		if err != nil {
			return nil, Outcome{}, classify(resolveClaim(ctx, db, site, err, withdrawOpen(g.Name, key, token)))
		}
		if attempt == 0 {
			history.record(!claimed)
		}
		switch {
		case claimed:
			c := &Claim{ID: id, Name: g.Name, Key: key, Token: token}
			return c, Outcome{Status: Ran, Claim: strconv.FormatInt(id, 10)}, nil
		case id == 0:
			continue // the open claim was settled in between, or is newer than the read: claim again
		case !wasStale:
			countAnswered(db, "open", g.Name, InFlight)
			return nil, Outcome{Status: InFlight, Holder: strconv.FormatInt(id, 10)}, nil
		}
		// Closed as stale, by this statement or a concurrent one: claim again.
		if _, err := db.Exec(ctx, closeStaleSQL, id); err != nil {
			return nil, Outcome{}, fmt.Errorf("once: open guard %s: closing stale claim %d: %w", g.Name, id, err)
		}
	}
	return nil, Outcome{}, fmt.Errorf("once: open guard %s: key %q: claims kept closing during %d attempts to claim", g.Name, key, maxClaimAttempts)
}

// claimOrRead sends the claim and, when the insert met an open claim, reads that claim: in
// one statement when both says so, else one after the other. It returns the new claim's id
// (claimed), or the open claim's id and whether it is stale, or id 0 when no open claim
// was read (settled before the read, or committed after its snapshot).
func (g Open) claimOrRead(ctx context.Context, db DB, key, token string, stale time.Duration, both bool) (id int64, claimed, wasStale bool, err error) {
	if both {
		err = db.QueryRow(ctx, claimOrReadSQL, g.Name, key, token, dbcall.Micros(stale)).Scan(&id, &claimed, &wasStale)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return 0, false, false, fmt.Errorf("once: open guard %s: claim: %w", g.Name, err)
		}
		return id, claimed, wasStale, nil
	}
	err = db.QueryRow(ctx, claimSQL, g.Name, key, token, dbcall.Micros(stale)).Scan(&id)
	if err == nil {
		return id, true, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, false, fmt.Errorf("once: open guard %s: claim: %w", g.Name, err)
	}
	err = db.QueryRow(ctx, openClaimSQL, g.Name, key).Scan(&id, &wasStale)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, false, nil
	}
	if err != nil {
		return 0, false, false, fmt.Errorf("once: open guard %s: reading the open claim: %w", g.Name, err)
	}
	return id, false, wasStale, nil
}

// Do claims key and, if the claim is new, runs fn with the claim in its context (ClaimFrom),
// then settles it: done when fn returns nil, failed (with fn's error as the reason) when it
// returns an error or panics. If another claim on the key is open, fn does not run and Do
// returns Outcome{Status: InFlight, Holder: the open claim's ID} with a nil error.
//
// On a *pgxpool.Pool, a function that outlives Stale/3 shows its claim's life every Stale/3
// (see NoHeartbeat), so a killed holder's claim is closed as stale by the next caller
// within Stale (45 s by default) of its last sign of life, and a living one never is.
//
// If the claim was closed as stale while fn ran (its holder showed no life for Stale), the
// settle finds it no longer open and Do returns an error wrapping ErrNotOwner: the work
// ran, but another caller may have started the same work meanwhile.
func (g Open) Do(ctx context.Context, db DB, key string, fn func(context.Context) error) (Outcome, error) {
	if fn == nil {
		return Outcome{}, invalid("open", g.Name, "nil function")
	}
	if err := checkGuardCall(ctx, db, "open", g.Name, key); err != nil {
		return Outcome{}, err
	}
	beat := beatsByItself(db) && !g.NoHeartbeat
	stale, err := g.stale(beat)
	if err != nil {
		return Outcome{}, err
	}
	c, out, err := g.claim(ctx, db, key, stale)
	if err != nil || c == nil {
		return out, err
	}
	fctx, stopHeartbeat := context.WithValue(ctx, claimKey, c), func() {}
	if beat {
		fctx, stopHeartbeat = heartbeatWhileRunning(fctx, stale, func(bctx context.Context) error { return c.Heartbeat(bctx, db) })
	}
	defer stopHeartbeat()
	err = callUndoing(fctx, fn, func(sctx context.Context, ferr error) error {
		stopHeartbeat()
		return c.Fail(sctx, db, ferr.Error())
	})
	stopHeartbeat()
	if err != nil {
		return out, err
	}
	sctx, cancel := dbcall.SettleContext(ctx)
	defer cancel()
	return out, c.Finish(sctx, db)
}

// stale is the window of the guard's claims: Stale, or its default, DefaultHeartbeatStale
// for claims a heartbeat keeps alive and DefaultStale for the rest.
func (g Open) stale(heartbeat bool) (time.Duration, error) {
	switch {
	case g.Stale < 0:
		return 0, invalid("open", g.Name, "negative stale window %v", g.Stale)
	case g.Stale > 0:
		return g.Stale, nil
	case heartbeat:
		return DefaultHeartbeatStale, nil
	}
	return DefaultStale, nil
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
	reason = dbcall.Reason(reason)
	return c.settle(ctx, db, "failed", &reason)
}

// Heartbeat shows the claim's life: its stale window is counted again from now. Do sends it
// by itself on a pool; a job that works on a claim made by Claim for longer than its window
// calls it between steps. It acts only on the claim's own open row and otherwise returns
// ErrNotOwner: the claim was closed as stale, and another worker may be doing the work.
func (c *Claim) Heartbeat(ctx context.Context, db DB) error {
	if err := c.check(ctx, db); err != nil {
		return err
	}
	if m := memoryOf(db); m != nil {
		return c.memoryHeartbeat(m)
	}
	tag, err := db.Exec(ctx, openHeartbeatSQL, c.ID, c.Token)
	if err != nil {
		return fmt.Errorf("once: open guard %s: claim %d: heartbeat: %w", c.Name, c.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("once: open guard %s: claim %d is no longer open (closed as stale, or settled): %w", c.Name, c.ID, ErrNotOwner)
	}
	return nil
}

func (c *Claim) settle(ctx context.Context, db DB, state string, reason *string) error {
	if err := c.check(ctx, db); err != nil {
		return err
	}
	if m := memoryOf(db); m != nil {
		return c.memorySettle(m, state)
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
	if m := memoryOf(db); m != nil {
		return c.memoryOpen(m, nil), nil
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
