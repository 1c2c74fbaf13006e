package once

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/runtime/internal/dbcall"
	"github.com/oncekit/once/runtime/internal/memstore"
)

// The guards' semantics on oncetest.Memory, the in-memory stand-in for unit tests. Most
// functions here stand in for one step of a guard (a claim, a settle, a reservation): the
// guard calls it, at the entry of the function that would send the step's statements, when
// its DB is the stand-in, and keeps its own control flow (waiting, running the function,
// undoing on failure or panic, the heartbeat, replaying a recorded outcome), so a caller
// observes what it would against PostgreSQL. Where a guard sends its statements inline
// (Episode.Do, Lease.Acquire) the stand-in's function is the whole call, with the same
// undo and the same waiting. Each step holds the store's lock throughout, as its statement
// is atomic. Transaction and table= guards, whose functions work in the caller's own
// transaction, and checkpoints, which are written in one, are refused with ErrNoSQL.

// memoryOf returns the store behind db when db is the stand-in, and nil otherwise.
func memoryOf(db DB) *memstore.Store {
	if h, ok := db.(memstore.Holder); ok {
		return h.MemoryStore()
	}
	return nil
}

// beatsByItself reports whether a guard's automatic heartbeat runs on db (see
// Forever.NoHeartbeat): on a pool, which several goroutines may use at once, and on the
// stand-in, which stands in for one, so a long function's claim lives as it would there.
func beatsByItself(db DB) bool {
	_, pool := db.(*pgxpool.Pool)
	return pool || memoryOf(db) != nil
}

// memoryRefused is the error of a guard whose promise needs a transaction on a real database.
func memoryRefused(kind, name, why string) error {
	return fmt.Errorf("once: %s guard %s: %s, which the in-memory stand-in does not have: %w", kind, name, why, memstore.ErrNoSQL)
}

// Forever.

// memoryClaim is foreverCall.claim on the stand-in: claim the key, or take it over (released,
// or a stale repeat-safe claim), or mark a stale claim uncertain, or answer with the row.
func (p *foreverCall) memoryClaim(m *memstore.Store, db DB) (*Attempt, *operationRow, error) {
	m.Lock()
	defer m.Unlock()
	now := m.Now()
	k := memstore.OpKey{Name: p.name, Scope: p.ref.Scope, Key: p.ref.Key}
	op := m.Operations[k]
	if op != nil && !op.ExpiresAt.IsZero() && !op.ExpiresAt.After(now) {
		delete(m.Operations, k) // forgotten: the key is free for new work, with a new id
		op = nil
	}
	if op == nil {
		op = &memstore.Operation{ID: newOperationID(), State: opOpen, Token: newToken(), Attempts: 1,
			Fingerprint: p.fingerprint, AliveAt: now, Retain: p.retain}
		m.Operations[k] = op
		return p.newAttempt(db, op.ID, op.Token, 1, ""), nil, nil
	}
	if p.fingerprint != nil && op.Fingerprint != nil && !bytes.Equal(p.fingerprint, op.Fingerprint) {
		return nil, nil, fmt.Errorf("%w: %s: %s (operation %s) was first used with another input",
			ErrMismatch, p.what(), p.label(), op.ID)
	}
	stale := op.State == opOpen && op.AliveAt.Before(now.Add(-p.stale))
	switch {
	case op.State == opReleased || (stale && p.repeatSafe):
		op.State, op.Token, op.AliveAt, op.Retain = opOpen, newToken(), now, p.retain
		op.Attempts++
		op.ExpiresAt, op.Result, op.Form, op.Err = time.Time{}, nil, "", nil
		if op.Fingerprint == nil {
			op.Fingerprint = p.fingerprint
		}
		return p.newAttempt(db, op.ID, op.Token, op.Attempts, ""), nil, nil
	case stale:
		reason := fmt.Sprintf("attempt %d showed no life for %v: its effect may or may not have happened", op.Attempts, p.stale)
		op.State, op.Err = opUncertain, &reason
	}
	return nil, &operationRow{id: op.ID, state: op.State, token: op.Token, attempts: op.Attempts,
		fingerprint: op.Fingerprint, result: op.Result, form: op.Form, errText: op.Err}, nil
}

// memorySettle is Attempt.settle on the stand-in. What is recorded (state, result, text) is
// the caller's, as it is for the database; ledger entries and follow-ups are not kept, as
// only onceops reads them, and it needs PostgreSQL.
func (a *Attempt) memorySettle(m *memstore.Store, state string, result []byte, form, text string) error {
	p := a.call
	m.Lock()
	defer m.Unlock()
	k := memstore.OpKey{Name: p.name, Scope: p.ref.Scope, Key: p.ref.Key}
	op := m.Operations[k]
	owned := op != nil && op.Token == a.token && (op.State == opOpen || op.State == opUncertain)
	if state == opWithdrawn {
		if owned && op.State == opOpen && op.Attempts == 1 { // no checkpoint can have been recorded here
			delete(m.Operations, k)
			return nil
		}
		state = opReleased
	}
	if !owned {
		return fmt.Errorf("%w: %s: operation %s was taken over or resolved while attempt %d ran; its outcome (%s) was not recorded",
			ErrNotOwner, p.what(), a.id, a.number, state)
	}
	op.Err = nil
	if text != "" {
		text = dbcall.Reason(text)
		op.Err = &text
	}
	now := m.Now()
	op.State, op.Result, op.Form, op.ExpiresAt = state, nil, "", time.Time{}
	if state == opDone {
		op.Result, op.Form = result, form
	}
	if state != opUncertain && op.Retain > 0 {
		op.ExpiresAt = now.Add(op.Retain)
	}
	return nil
}

// memoryHeartbeat is Attempt.Heartbeat on the stand-in.
func (a *Attempt) memoryHeartbeat(m *memstore.Store) error {
	p := a.call
	m.Lock()
	defer m.Unlock()
	op := m.Operations[memstore.OpKey{Name: p.name, Scope: p.ref.Scope, Key: p.ref.Key}]
	if op == nil || op.Token != a.token || op.State != opOpen {
		return fmt.Errorf("%w: operation %s: attempt %d no longer holds the claim", ErrNotOwner, a.id, a.number)
	}
	op.AliveAt = m.Now()
	return nil
}

// Episode.

// memoryDo is Episode.Do on the stand-in.
func (g Episode) memoryDo(ctx context.Context, m *memstore.Store, key string, fn func(context.Context) error) (Outcome, error) {
	k, token := memstore.Key{Name: g.Name, Key: key}, newToken()
	m.Lock()
	l := m.Latches[k]
	if l == nil {
		l = &memstore.Latch{}
		m.Latches[k] = l
	}
	if l.Fired {
		m.Unlock()
		return Outcome{Status: Duplicate}, nil
	}
	l.Fired, l.Token = true, token
	l.Firings++
	out := Outcome{Status: Ran, Firing: l.Firings}
	m.Unlock()
	err := callUndoing(ctx, fn, func(context.Context, error) error {
		m.Lock()
		defer m.Unlock()
		if l.Fired && l.Token == token { // a Rearm and a new firing since are left alone
			l.Fired = false
		}
		return nil
	})
	return out, err
}

// memoryRearm is Episode.Rearm on the stand-in.
func (g Episode) memoryRearm(m *memstore.Store, key string) bool {
	m.Lock()
	defer m.Unlock()
	l := m.Latches[memstore.Key{Name: g.Name, Key: key}]
	if l == nil || !l.Fired {
		return false
	}
	l.Fired = false
	return true
}

// Open.

// memoryClaim is Open.claim on the stand-in: an open claim past its own window is closed as
// stale, and the key claimed again.
func (g Open) memoryClaim(m *memstore.Store, key string, stale time.Duration) (*Claim, Outcome, error) {
	m.Lock()
	defer m.Unlock()
	now := m.Now()
	k := memstore.Key{Name: g.Name, Key: key}
	if c := m.Claims[k]; c != nil {
		if c.AliveAt.Add(c.Stale).After(now) {
			return nil, Outcome{Status: InFlight, Holder: strconv.FormatInt(c.ID, 10)}, nil
		}
		delete(m.Claims, k)
	}
	m.LastClaim++
	c := &memstore.Claim{ID: m.LastClaim, Token: newToken(), AliveAt: now, Stale: stale}
	m.Claims[k] = c
	return &Claim{ID: c.ID, Name: g.Name, Key: key, Token: c.Token}, Outcome{Status: Ran, Claim: strconv.FormatInt(c.ID, 10)}, nil
}

// memoryOpen finds c's row, open with c's token, and runs do on it under the store's lock; it
// reports whether there was one. do may be nil.
func (c *Claim) memoryOpen(m *memstore.Store, do func(k memstore.Key, row *memstore.Claim)) bool {
	m.Lock()
	defer m.Unlock()
	k := memstore.Key{Name: c.Name, Key: c.Key}
	row := m.Claims[k]
	if row == nil || row.ID != c.ID || row.Token != c.Token {
		return false
	}
	if do != nil {
		do(k, row)
	}
	return true
}

// memorySettle is Claim.settle on the stand-in.
func (c *Claim) memorySettle(m *memstore.Store, state string) error {
	if !c.memoryOpen(m, func(k memstore.Key, _ *memstore.Claim) { delete(m.Claims, k) }) {
		return fmt.Errorf("once: open guard %s: claim %d is no longer open (closed as stale, or settled already): %w", c.Name, c.ID, ErrNotOwner)
	}
	return nil
}

// memoryHeartbeat is Claim.Heartbeat on the stand-in.
func (c *Claim) memoryHeartbeat(m *memstore.Store) error {
	if !c.memoryOpen(m, func(_ memstore.Key, row *memstore.Claim) { row.AliveAt = m.Now() }) {
		return fmt.Errorf("once: open guard %s: claim %d is no longer open (closed as stale, or settled): %w", c.Name, c.ID, ErrNotOwner)
	}
	return nil
}

// Statement.

// memoryReserve is Statement.reserve on the stand-in.
func (g Statement) memoryReserve(m *memstore.Store, key string, n int64, token string) (used int64, ok bool) {
	m.Lock()
	defer m.Unlock()
	k := memstore.Key{Name: g.Name, Key: key}
	c := m.Counters[k]
	if c == nil {
		c = &memstore.Counter{Units: map[string]int64{}}
		m.Counters[k] = c
	}
	if c.Used+n > g.Cap {
		return c.Used, false
	}
	c.Used += n
	c.Units[token] += n
	return c.Used, true
}

// memoryGiveBack is Statement.giveBack on the stand-in.
func (g Statement) memoryGiveBack(m *memstore.Store, key string, tokens ...string) int64 {
	m.Lock()
	defer m.Unlock()
	c := m.Counters[memstore.Key{Name: g.Name, Key: key}]
	if c == nil {
		return 0
	}
	var n int64
	for _, t := range tokens {
		n += c.Units[t]
		delete(c.Units, t)
	}
	c.Used -= n
	return n
}

// memoryRefund is Statement.Refund on the stand-in: n of the key's units, whoever reserved
// them, or none if it holds fewer.
func (g Statement) memoryRefund(m *memstore.Store, key string, n int64) error {
	m.Lock()
	defer m.Unlock()
	c := m.Counters[memstore.Key{Name: g.Name, Key: key}]
	if c == nil || c.Used < n {
		return invalid("statement", g.Name, "refund of %d for key %q exceeds the units reserved", n, key)
	}
	c.Used -= n
	for t, u := range c.Units {
		take := min(u, n)
		if c.Units[t] -= take; c.Units[t] == 0 {
			delete(c.Units, t)
		}
		if n -= take; n == 0 {
			break
		}
	}
	return nil
}

// Lease.

// memoryAcquire is Lease.Acquire on the stand-in, polling as the database's does while Wait
// lasts.
func (g Lease) memoryAcquire(ctx context.Context, m *memstore.Store, key string) (*Held, Outcome, error) {
	token := newToken()
	deadline := time.Now().Add(g.Wait)
	pause := 5 * time.Millisecond
	for {
		if h := g.memoryTake(m, key, token); h != nil {
			return h, Outcome{Status: Ran, Fence: h.Fence}, nil
		}
		left := time.Until(deadline)
		if g.Wait == 0 || left <= 0 {
			return nil, Outcome{Status: Busy}, nil
		}
		sleep := min(pause/2+rand.N(pause), left)
		pause = min(pause*2, 250*time.Millisecond)
		if !sleepCtx(ctx, sleep) {
			return nil, Outcome{}, fmt.Errorf("once: lease guard %s: waiting for key %q: %w", g.Name, key, ctx.Err())
		}
	}
}

// memoryTake takes the lease if it is free (no row, released or expired), bumping the fence
// of a row taken over; nil if another holder has it.
func (g Lease) memoryTake(m *memstore.Store, key, token string) *Held {
	m.Lock()
	defer m.Unlock()
	now := m.Now()
	k := memstore.Key{Name: g.Name, Key: key}
	l := m.Leases[k]
	switch {
	case l == nil:
		l = &memstore.Lease{}
		m.Leases[k] = l
	case !l.Released && l.ExpiresAt.After(now):
		return nil
	}
	l.Holder, l.ExpiresAt, l.Released = token, now.Add(g.TTL), false
	l.Fence++
	return &Held{Name: g.Name, Key: key, Token: token, Fence: l.Fence, ExpiresAt: l.ExpiresAt}
}

// memoryLease runs do on h's row under the store's lock if h holds it (live says it must
// also be unexpired), and reports whether it did.
func (h *Held) memoryLease(m *memstore.Store, live bool, do func(l *memstore.Lease, now time.Time)) bool {
	m.Lock()
	defer m.Unlock()
	now := m.Now()
	l := m.Leases[memstore.Key{Name: h.Name, Key: h.Key}]
	if l == nil || l.Holder != h.Token || l.Released || (live && !l.ExpiresAt.After(now)) {
		return false
	}
	do(l, now)
	return true
}

// memoryRelease is Held.Release on the stand-in.
func (h *Held) memoryRelease(m *memstore.Store) error {
	if !h.memoryLease(m, false, func(l *memstore.Lease, _ time.Time) { l.Released = true }) {
		return fmt.Errorf("once: lease guard %s: key %q: lease (fence %d) is no longer this holder's: %w", h.Name, h.Key, h.Fence, ErrNotOwner)
	}
	return nil
}

// memoryExtend is Held.Extend on the stand-in.
func (h *Held) memoryExtend(m *memstore.Store, ttl time.Duration) error {
	if !h.memoryLease(m, true, func(l *memstore.Lease, now time.Time) { l.ExpiresAt = now.Add(ttl); h.ExpiresAt = l.ExpiresAt }) {
		return fmt.Errorf("once: lease guard %s: key %q: lease (fence %d) expired or is no longer this holder's: %w", h.Name, h.Key, h.Fence, ErrNotOwner)
	}
	return nil
}

// memoryRestore is Lease.Restore on the stand-in.
func (g Lease) memoryRestore(m *memstore.Store, key, token string) (*Held, error) {
	h := &Held{Name: g.Name, Key: key, Token: token}
	if !h.memoryLease(m, true, func(l *memstore.Lease, _ time.Time) { h.Fence, h.ExpiresAt = l.Fence, l.ExpiresAt }) {
		return nil, fmt.Errorf("once: lease guard %s: key %q: no live lease for this token: %w", g.Name, key, ErrNotOwner)
	}
	return h, nil
}
