package once

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Statement is the promise "once per count": of all the callers asking for units of one key,
// only as many are served as the cap allows (an allowance of two runs a month, five
// reminders per invoice). A reservation adds n to the key's counter in one statement that
// refuses to pass the cap, so no interleaving of callers can exceed it: there is no read
// before the write to race with.
//
// Its table is once.counters.
type Statement[T any] struct {
	// Name identifies the guard; a counter is per Name and key.
	Name string
	// Cap is the most units a key may have reserved at once. Zero refuses every
	// reservation.
	Cap int64
}

// reserveSQL is the reservation, in one statement that answers a refusal too.
//
// A reservation is a conditional upsert: the conflict branch's WHERE keeps an existing counter
// within the cap, and the SELECT's own WHERE refuses a first reservation larger than the cap
// (the insert branch has no conflict WHERE). But ON CONFLICT .. DO UPDATE locks the
// conflicting row even when its WHERE refuses the update, and the lock writes WAL; under a
// storm on a full counter every refusal would queue on the one row. So the statement first
// reads the counter in its snapshot (a plain read: no lock, nothing written), and proposes no
// row at all when the counter it read is already too full for n: such a refusal meets no
// conflict and takes no lock. The refusal is true at that snapshot, a moment during the call;
// a refund committed since does not make it wrong, only older than the call's return.
//
// Only the upsert ever writes, and it checks the cap under the row's lock against the newest
// committed count, so the cap stays exact whatever the snapshot read: the read can only
// refuse, never reserve.
//
// The answer is one row: (used after this reservation, true), or (the count read, false) for
// a refusal. The count read may still have had room when the upsert, waiting for the lock,
// met a counter that others had filled meanwhile; then Reserve reads the count again. No row
// at all is a refusal with no counter in the snapshot. The casts are explicit: untyped
// parameters compared with each other would compare as text.
const reserveSQL = `WITH counter AS (
	SELECT used FROM once.counters WHERE name = $1::text AND key = $2::text
), reserved AS (
	INSERT INTO once.counters AS c (name, key, used, cap)
	SELECT $1::text, $2::text, $3::bigint, $4::bigint
	WHERE $3::bigint <= $4::bigint AND NOT EXISTS (SELECT FROM counter WHERE used + $3::bigint > $4::bigint)
	ON CONFLICT (name, key) DO UPDATE
	SET used = c.used + EXCLUDED.used, cap = EXCLUDED.cap, updated_at = clock_timestamp()
	WHERE c.used + EXCLUDED.used <= EXCLUDED.cap
	RETURNING used
)
SELECT used, true FROM reserved
UNION ALL
SELECT used, false FROM counter WHERE NOT EXISTS (SELECT FROM reserved)`

// Reserve adds n units to the key's counter if the total stays within Cap, in one statement.
// It returns the units used after the call and whether this reservation was made. A refusal
// is not an error: ok is false and used is the key's current count. A refusal on a counter
// already full takes no lock and writes nothing; only a reservation that lost a race for the
// last units reads the count in a second statement.
func (g Statement[T]) Reserve(ctx context.Context, db DB, key string, n int64) (used int64, ok bool, err error) {
	if err := g.check(ctx, db, key, n); err != nil {
		return 0, false, err
	}
	err = db.QueryRow(ctx, reserveSQL, g.Name, key, n, g.Cap).Scan(&used, &ok)
	switch {
	case err == nil && (ok || used+n > g.Cap):
		return used, ok, nil
	case n > g.Cap && errors.Is(err, pgx.ErrNoRows):
		return 0, false, nil // n alone is over the cap
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return 0, false, classifyAnswered(fmt.Errorf("once: statement guard %s: reserve %d: %w", g.Name, n, err))
	}
	// Refused under the lock although the snapshot had room (or no counter yet): the count
	// that refused it is newer than the snapshot's.
	err = db.QueryRow(ctx, "SELECT used FROM once.counters WHERE name = $1 AND key = $2", g.Name, key).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, classify(fmt.Errorf("once: statement guard %s: reading the refused counter: %w", g.Name, err))
	}
	return used, false, nil
}

// Refund gives back n units reserved earlier, for work that was not delivered: an allowance
// counts only what the customer received. Refunding more than the counter holds is refused
// with ErrInvalid and changes nothing.
func (g Statement[T]) Refund(ctx context.Context, db DB, key string, n int64) error {
	if err := g.check(ctx, db, key, n); err != nil {
		return err
	}
	tag, err := db.Exec(ctx, `UPDATE once.counters SET used = used - $3, updated_at = clock_timestamp()
WHERE name = $1 AND key = $2 AND used >= $3`, g.Name, key, n)
	if err != nil {
		return fmt.Errorf("once: statement guard %s: refund %d: %w", g.Name, n, err)
	}
	if tag.RowsAffected() == 0 {
		return invalid("statement", g.Name, "refund of %d for key %q exceeds the units reserved", n, key)
	}
	return nil
}

// Do reserves n units for key and, if they were reserved, runs fn. If fn returns an error the
// units are refunded (the work was not delivered) and fn's error is returned. When the cap
// would be exceeded, fn does not run and Do returns Outcome{Status: Refused, Count: current}
// with a nil error: a full allowance is an answer, not a failure.
//
// The refund runs even when ctx was cancelled during fn, so a cancelled request does not
// keep its units; a panicking fn is refunded too. Outcome.Count is the count the
// reservation returned.
func (g Statement[T]) Do(ctx context.Context, db DB, key string, n int64, fn func(context.Context) (T, error)) (T, Outcome, error) {
	var zero T
	if fn == nil {
		return zero, Outcome{}, invalid("statement", g.Name, "nil function")
	}
	used, ok, err := g.Reserve(ctx, db, key, n)
	if err != nil {
		return zero, Outcome{}, err
	}
	if !ok {
		return zero, Outcome{Status: Refused, Count: used}, nil
	}
	out := Outcome{Status: Ran, Count: used}
	v, err := callUndoing(ctx, fn, func(sctx context.Context, _ error) error { return g.Refund(sctx, db, key, n) })
	return v, out, err
}

func (g Statement[T]) check(ctx context.Context, db DB, key string, n int64) error {
	if err := checkGuardCall(ctx, db, "statement", g.Name, key); err != nil {
		return err
	}
	switch {
	case g.Cap < 0:
		return invalid("statement", g.Name, "negative cap %d", g.Cap)
	case n <= 0:
		return invalid("statement", g.Name, "n is %d; a reservation is at least 1 unit", n)
	}
	return nil
}
