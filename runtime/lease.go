package once

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// Lease is the promise "one holder at a time, expiring by itself": the lock around starting
// a paid run for one organisation, held for seconds. It is a row in once.leases with an owner
// token and an expiry computed by the database's clock. The holder releases it when done (Do
// does so in a defer); if the holder's process is killed, nothing releases it, and the expiry
// does: after TTL the next caller takes it over.
//
// Each change of holder increases the lease's fence. A holder that paused past its expiry,
// and whose lease was taken over meanwhile, can no longer release or extend it; it should
// also fence its own writes (store Held.Fence with them and refuse older fences) where the
// effect allows it.
type Lease struct {
	// Name identifies the guard; a lease is per Name and key.
	Name string
	// TTL is how long an acquired lease lasts unless extended or released. It must cover the
	// work (or the work must Extend it), and it bounds how long a killed holder blocks others.
	TTL time.Duration
	// Wait is how long Acquire and Do keep trying while another holder has the lease. Zero
	// means do not wait: a held lease is Outcome{Status: Busy} at once.
	Wait time.Duration
}

// Held is an acquired lease.
type Held struct {
	// Name and Key are the guard and key leased.
	Name, Key string
	// Token is the holder's secret, stored in the row as holder.
	Token string
	// Fence increases each time the lease changes hands.
	Fence int64
	// ExpiresAt is when the lease lapses, by the database's clock (compare it with the
	// database's time, not the local clock, which may disagree).
	ExpiresAt time.Time
}

// acquireSQL takes the lease if it is free: no row yet, released, or expired. Taking an
// existing row over bumps its fence. A lease held by someone else returns no row.
const acquireSQL = `INSERT INTO once.leases AS l (name, key, holder, fence, acquired_at, expires_at)
VALUES ($1, $2, $3, 1, clock_timestamp(), clock_timestamp() + $4::bigint * interval '1 microsecond')
ON CONFLICT (name, key) DO UPDATE
SET holder = EXCLUDED.holder, fence = l.fence + 1, acquired_at = EXCLUDED.acquired_at,
	expires_at = EXCLUDED.expires_at, released_at = NULL, released_by = NULL
WHERE l.released_at IS NOT NULL OR l.expires_at <= clock_timestamp()
RETURNING fence, expires_at`

// releaseSQL gives a lease up, only for its holder and only once.
const releaseSQL = `UPDATE once.leases SET released_at = clock_timestamp(), released_by = 'holder'
WHERE name = $1 AND key = $2 AND holder = $3 AND released_at IS NULL`

// Acquire takes the lease on key for TTL, and returns it with Outcome{Status: Ran, Fence:
// its fence}. If another holder has it, it tries again until Wait has passed (not at all
// when Wait is zero) and then returns a nil Held and Outcome{Status: Busy}, with a nil
// error.
func (g Lease) Acquire(ctx context.Context, db DB, key string) (*Held, Outcome, error) {
	if err := checkGuardCall(ctx, db, "lease", g.Name, key); err != nil {
		return nil, Outcome{}, err
	}
	switch {
	case g.TTL <= 0:
		return nil, Outcome{}, invalid("lease", g.Name, "non-positive TTL %v", g.TTL)
	case g.Wait < 0:
		return nil, Outcome{}, invalid("lease", g.Name, "negative wait %v", g.Wait)
	}
	if m := memoryOf(db); m != nil {
		return g.memoryAcquire(ctx, m, key)
	}
	token := newToken()
	var deadline time.Time
	if g.Wait > 0 {
		deadline = time.Now().Add(g.Wait) // a local timeout, not an expiry: the local clock is right here
	}
	pause := 5 * time.Millisecond
	for {
		h := &Held{Name: g.Name, Key: key, Token: token}
		site, err := sendClaim(ctx, db, func(cdb DB) error {
			return cdb.QueryRow(ctx, acquireSQL, g.Name, key, token, dbcall.Micros(g.TTL)).Scan(&h.Fence, &h.ExpiresAt)
		})
		if err == nil {
			return h, Outcome{Status: Ran, Fence: h.Fence}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			err = fmt.Errorf("once: lease guard %s: acquire: %w", g.Name, err)
			return nil, Outcome{}, classify(resolveClaim(ctx, db, site, err, withdrawLease(g.Name, key, token)))
		}
		left := time.Until(deadline)
		if g.Wait == 0 || left <= 0 {
			countAnswered(db, "lease", g.Name, Busy)
			return nil, Outcome{Status: Busy}, nil
		}
		// Poll with jittered, growing pauses: waiters do not retry in lockstep, and a long
		// wait does not keep hammering the row.
		sleep := min(pause/2+rand.N(pause), left)
		pause = min(pause*2, 250*time.Millisecond)
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, Outcome{}, fmt.Errorf("once: lease guard %s: waiting for key %q: %w", g.Name, key, ctx.Err())
		case <-t.C:
		}
	}
}

// Do acquires the lease on key, runs fn with the lease in its context (LeaseFrom), and
// releases the lease when fn returns, even if it panics. A lease held by another holder
// returns Outcome{Status: Busy} and a nil error; fn does not run. On success Outcome.Fence
// is the lease's fence.
//
// If the lease expired while fn ran and another holder took it, the release fails and Do
// returns an error wrapping ErrNotOwner: fn's work overlapped another holder's, and the
// caller should know.
func (g Lease) Do(ctx context.Context, db DB, key string, fn func(context.Context) error) (Outcome, error) {
	if fn == nil {
		return Outcome{}, invalid("lease", g.Name, "nil function")
	}
	h, out, err := g.Acquire(ctx, db, key)
	if err != nil || h == nil {
		return out, err
	}
	_, err = callSettled(context.WithValue(ctx, leaseKey, h),
		func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) },
		func(sctx context.Context) { h.Release(sctx, db) })
	sctx, cancel := dbcall.SettleContext(ctx)
	defer cancel()
	if rerr := h.Release(sctx, db); rerr != nil {
		return out, errors.Join(err, rerr)
	}
	return out, err
}

// Release gives the lease up. It acts only while this holder's token is the lease's holder
// and it was not released already; otherwise (expired and taken over, released by force)
// it changes nothing and returns ErrNotOwner. A lease that expired but was not taken over is
// still released: nobody else held it in between.
func (h *Held) Release(ctx context.Context, db DB) error {
	if err := h.check(ctx, db); err != nil {
		return err
	}
	if m := memoryOf(db); m != nil {
		return h.memoryRelease(m)
	}
	tag, err := db.Exec(ctx, releaseSQL, h.Name, h.Key, h.Token)
	if err != nil {
		return fmt.Errorf("once: lease guard %s: release: %w", h.Name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("once: lease guard %s: key %q: lease (fence %d) is no longer this holder's: %w", h.Name, h.Key, h.Fence, ErrNotOwner)
	}
	return nil
}

// Extend makes the lease last ttl from now (the database's now). It acts only while the
// lease is still this holder's and unexpired; a lease that lapsed was free for anyone to
// take, so extending it would hide that the holder lost its exclusivity for a while:
// that returns ErrNotOwner, and the holder should acquire again.
func (h *Held) Extend(ctx context.Context, db DB, ttl time.Duration) error {
	if err := h.check(ctx, db); err != nil {
		return err
	}
	if ttl <= 0 {
		return invalid("lease", h.Name, "extend by a non-positive TTL %v", ttl)
	}
	if m := memoryOf(db); m != nil {
		return h.memoryExtend(m, ttl)
	}
	err := db.QueryRow(ctx, `UPDATE once.leases SET expires_at = clock_timestamp() + $4::bigint * interval '1 microsecond'
WHERE name = $1 AND key = $2 AND holder = $3 AND released_at IS NULL AND expires_at > clock_timestamp()
RETURNING expires_at`, h.Name, h.Key, h.Token, dbcall.Micros(ttl)).Scan(&h.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("once: lease guard %s: key %q: lease (fence %d) expired or is no longer this holder's: %w", h.Name, h.Key, h.Fence, ErrNotOwner)
	}
	if err != nil {
		return fmt.Errorf("once: lease guard %s: extend: %w", h.Name, err)
	}
	return nil
}

func (h *Held) check(ctx context.Context, db DB) error {
	if h == nil {
		return fmt.Errorf("%w: nil lease", ErrInvalid)
	}
	return checkGuardHandle(ctx, db, "lease", h.Name)
}

// Restore picks up a lease of the guard this process (or a successor that kept the token)
// still holds: after a restart that kept the token in a job's state, say. It returns
// ErrNotOwner if the lease expired, was released or changed hands.
func (g Lease) Restore(ctx context.Context, db DB, key, token string) (*Held, error) {
	name := g.Name
	if err := checkGuardCall(ctx, db, "lease", name, key); err != nil {
		return nil, err
	}
	if token == "" {
		return nil, invalid("lease", name, "empty token")
	}
	if m := memoryOf(db); m != nil {
		return g.memoryRestore(m, key, token)
	}
	h := &Held{Name: name, Key: key, Token: token}
	err := db.QueryRow(ctx, `SELECT fence, expires_at FROM once.leases
WHERE name = $1 AND key = $2 AND holder = $3 AND released_at IS NULL AND expires_at > clock_timestamp()`,
		name, key, token).Scan(&h.Fence, &h.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("once: lease guard %s: key %q: no live lease for this token: %w", name, key, ErrNotOwner)
	}
	if err != nil {
		return nil, fmt.Errorf("once: lease guard %s: restore: %w", name, err)
	}
	return h, nil
}

// LeaseFrom returns the lease a Lease guard put in ctx: inside its function, the lease it
// runs under (for its fence, or to Extend it during long work).
func LeaseFrom(ctx context.Context) (*Held, bool) {
	h, ok := ctx.Value(leaseKey).(*Held)
	return h, ok
}
