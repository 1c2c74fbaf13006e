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

// reserveSQL is the reservation. The conflict branch's WHERE keeps an existing counter within
// the cap; the insert branch has no such WHERE, so the SELECT's own WHERE refuses a first
// reservation larger than the cap (no row to insert, hence no row back). No row back is the
// refusal. The casts are explicit: untyped parameters compared with each other would
// compare as text.
const reserveSQL = `INSERT INTO once.counters AS c (name, key, used, cap)
SELECT $1::text, $2::text, $3::bigint, $4::bigint WHERE $3::bigint <= $4::bigint
ON CONFLICT (name, key) DO UPDATE
SET used = c.used + EXCLUDED.used, cap = EXCLUDED.cap, updated_at = clock_timestamp()
WHERE c.used + EXCLUDED.used <= EXCLUDED.cap
RETURNING used`

// Reserve adds n units to the key's counter if the total stays within Cap, in one statement.
// It returns the units used after the call and whether this reservation was made. A refusal
// is not an error: ok is false and used is the key's current count (read by a second
// statement, on the refusal path only).
func (g Statement[T]) Reserve(ctx context.Context, db DB, key string, n int64) (used int64, ok bool, err error) {
	if err := g.check(ctx, db, key, n); err != nil {
		return 0, false, err
	}
	err = db.QueryRow(ctx, reserveSQL, g.Name, key, n, g.Cap).Scan(&used)
	if err == nil {
		return used, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, classifyAnswered(fmt.Errorf("once: statement guard %s: reserve %d: %w", g.Name, n, err))
	}
	err = db.QueryRow(ctx, "SELECT used FROM once.counters WHERE name = $1 AND key = $2", g.Name, key).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil // refused on the first reservation: n alone is over the cap
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
