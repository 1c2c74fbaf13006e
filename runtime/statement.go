package once

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Statement is the promise "once per count": of all the callers asking for units of one key,
// only as many are served as the cap allows (an allowance of two runs a month, five
// reminders per invoice).
//
// A key's units are rows of once.counter_slots, one per unit held, each numbered below the
// cap: a reservation of n units inserts n slots that were free, in one statement that also
// counts the key's slots. The primary key (name, key, slot) makes the cap exact under every
// interleaving: no two reservations can hold one slot, and no slot is numbered at or above
// the cap, so no more than cap units are ever held. Reservations of one key insert rows of
// their own and commit side by side; none waits for another's commit unless both picked the
// same free slot. A key found full is marked so in once.counter_full, and the refusals after
// it read the mark instead of counting (see reserveSQL for why the mark stays true).
//
// Its tables are once.counter_slots and once.counter_full.
type Statement struct {
	// Name identifies the guard; a counter is per Name and key.
	Name string
	// Cap is the most units a key may have reserved at once. Zero refuses every
	// reservation. Lowering it while units are held refuses reservations while the units
	// counted reach the new cap; units already numbered at or above it count until they are
	// refunded, and until then concurrent reservations may fill every slot below it.
	Cap int64
}

// reserveSQL is one attempt at a reservation: $1 name, $2 key, $3 n, $4 cap, $5 and $6 the
// first slot to try and the stride between tries, $7 the reservation's token.
//
// It reads the key's row of once.counter_full and, unless that row shows the key full, counts
// the key's slots and keeps their numbers, all in the statement's snapshot (plain reads: no
// lock, nothing written). A key is full when every slot below a cap at or above this
// guard's is held and no slot sits at or above that cap: it holds exactly that many units,
// and a refusal costs two index probes instead of a count of the key's rows. Only if n more
// fit under the cap does it walk the slot numbers below the cap from $5 in steps of $6
// (coprime with the cap, so the walk visits each number once, and callers starting at
// random places rarely pick the same slot), taking the first n not among the numbers read
// (one read of the key's slots serves the count and the walk). The walk is a set-returning
// function in a select list, evaluated row by row, so the LIMIT stops it at the n-th free
// slot. A refusal therefore reads and writes nothing else and takes no lock: it is true at
// the snapshot, a moment during the call; a refund committed since does not make it wrong,
// only older than the call's return.
//
// The insert alone decides: a slot another reservation took since the snapshot (or is
// taking) is a conflict, which DO NOTHING skips after that reservation commits or aborts.
// The answer is the count read and how many slots were inserted; fewer than n means the
// attempt lost a race for a slot and Reserve tries again in a fresh snapshot, which sees the
// slot taken. Slots are inserted in ascending order: a reservation of several units waits
// on a slot another reservation is inserting, and two that took their slots in different
// orders would each wait on the other (a deadlock, SQLSTATE 40P01).
//
// The probe compares the slots with the mark's cap as a value of its own (an uncorrelated
// subquery), so that it is an index condition: correlated, a generic plan reads every slot of
// the key and filters them.
//
// A refusal that counted every slot below the cap held marks the key full, for the refusals
// after it; the only write a refusal makes, once per key and cap. Slots are never taken
// from a key but by a delete (or, by hand, an update), and every one bumps the row's epoch
// and clears its cap in the deleting transaction (the triggers on once.counter_slots; a
// TRUNCATE of the slots clears every cap), so the mark is made only if nothing was deleted
// since the snapshot, checked under the row's lock: a key with no row in the snapshot is
// marked by an insert that DO NOTHING gives up if a give-back made the row meanwhile; a key
// whose row the snapshot saw is marked by an update whose WHERE wants the epoch it saw, which
// PostgreSQL checks again on the newest row version once a concurrent give-back has
// committed (the lock is the give-back's until its transaction ends, so a marking refusal
// waits for a give-back of the key still in flight). A give-back committed after the mark
// clears it. Neither form takes a lock when another refusal has marked the key already (the
// insert waits only for an insert in progress; the update's WHERE refuses the row version
// it reads), so the refusals that meet a key as it fills do not queue behind each other's
// commits, as an upsert's DO UPDATE would make them. Inserts cannot make a mark untrue: a
// slot below its cap is held, and one at or above it is the probe's to see. The epoch lives
// in the row, so a row of once.counter_full deleted by hand while guards run could let a
// refusal that straddled a give-back insert a mark on a key it no longer knows full: to
// forget marks, set cap to NULL instead.
//
// The casts are explicit: untyped parameters compared with each other would compare as
// text.
const reserveSQL = reserveReadSQL + `), pick AS (
	SELECT p.slot FROM (
		SELECT (($5::numeric + generate_series(0::bigint, $4::bigint - 1)::numeric * $6::numeric) % $4::numeric)::bigint AS slot
	) AS p
	WHERE (SELECT used FROM counted) + $3::bigint <= $4::bigint
	AND p.slot <> ALL (coalesce((SELECT taken FROM held), '{}'))
	LIMIT $3::bigint
), reserved AS (
	INSERT INTO once.counter_slots (name, key, slot, token)
	SELECT $1::text, $2::text, slot, $7::text FROM pick ORDER BY slot
	ON CONFLICT (name, key, slot) DO NOTHING
	RETURNING slot
` + reserveMarkSQL + `
SELECT (SELECT used FROM counted), (SELECT count(*) FROM reserved)`

// groupReserveSQL is reserveSQL for a group of one-unit reservations (see
// reservationGroups): $3 is the members' tokens, and the statement picks one free slot for
// each, as many as fit under the cap, in one walk from $5 in steps of $6, and inserts each
// picked slot with its member's token. It answers with the count read and the tokens whose
// slots were inserted. A member given no slot is refused only if the count read reached the
// cap: the key was full in the statement's snapshot, a moment during the member's call. A
// member left without a slot below that (its group-mates took the slots left, or its picked
// slot was taken meanwhile) asks again: the group's own slots do not show the key full at
// any one moment, since a unit given back after the snapshot and before the group's commit
// would be free throughout.
//
// The walk's LIMIT is the number of members, a value the planner sees, and the cap bounds
// the insert instead: with a subquery in the LIMIT, a custom plan would cost the walk as a
// share of the whole cap, and at a cap of millions pass jit_above_cost, so that every custom
// plan was compiled (hundreds of milliseconds a statement).
const groupReserveSQL = reserveReadSQL + `), pick AS (
	SELECT p.slot, row_number() OVER () AS i FROM (
		SELECT p.slot FROM (
			SELECT (($5::numeric + generate_series(0::bigint, $4::bigint - 1)::numeric * $6::numeric) % $4::numeric)::bigint AS slot
		) AS p
		WHERE (SELECT used FROM counted) < $4::bigint
		AND p.slot <> ALL (coalesce((SELECT taken FROM held), '{}'))
		LIMIT cardinality($3::text[])
	) AS p
), reserved AS (
	INSERT INTO once.counter_slots (name, key, slot, token)
	SELECT $1::text, $2::text, p.slot, t.token
	FROM pick AS p JOIN unnest($3::text[]) WITH ORDINALITY AS t(token, i) ON t.i = p.i
	WHERE p.i <= $4::bigint - (SELECT used FROM counted)
	ORDER BY p.slot
	ON CONFLICT (name, key, slot) DO NOTHING
	RETURNING token
` + reserveMarkSQL + `
SELECT (SELECT used FROM counted), coalesce((SELECT array_agg(token) FROM reserved), '{}')`

// reserveReadSQL is the head of reserveSQL and groupReserveSQL: the key's mark and slots, read in
// the statement's snapshot ($1 name, $2 key, $4 cap).
const reserveReadSQL = `WITH known AS (
	SELECT cap, epoch FROM once.counter_full WHERE name = $1::text AND key = $2::text
), full_at AS (
	SELECT k.cap FROM known AS k WHERE k.cap >= $4::bigint
	AND NOT EXISTS (SELECT FROM once.counter_slots AS t WHERE t.name = $1::text AND t.key = $2::text AND t.slot >= (SELECT cap FROM known))
), held AS (
	SELECT count(*) AS used, count(*) FILTER (WHERE slot < $4::bigint) AS below, array_agg(slot) AS taken
	FROM once.counter_slots WHERE name = $1::text AND key = $2::text AND NOT EXISTS (SELECT FROM full_at)
), counted AS (
	SELECT coalesce((SELECT cap FROM full_at), (SELECT used FROM held)) AS used
`

// reserveMarkSQL is the tail of reserveSQL and groupReserveSQL: the mark of a key found full.
const reserveMarkSQL = `), marked AS (
	INSERT INTO once.counter_full (name, key, cap)
	SELECT $1::text, $2::text, $4::bigint FROM held
	WHERE $4::bigint > 0 AND held.below = $4::bigint AND NOT EXISTS (SELECT FROM known)
	ON CONFLICT (name, key) DO NOTHING
), marked_again AS (
	UPDATE once.counter_full AS f SET cap = $4::bigint
	FROM held, known
	WHERE f.name = $1::text AND f.key = $2::text AND $4::bigint > 0 AND held.below = $4::bigint
	AND f.epoch = known.epoch AND f.cap IS DISTINCT FROM $4::bigint
	AND known.cap IS DISTINCT FROM $4::bigint
)`

// fullSQL refuses a reservation of a key marked full without sending the reservation: the
// mark's cap, at or above the guard's, if no slot sits at or above it (the key then holds
// exactly that many units, see reserveSQL). A plain read of two index probes, sent first
// while most of a guard's reservations are refused (see reserveHistory); no row means
// the key is not known full, and the reservation follows.
const fullSQL = `WITH f AS (
	SELECT cap FROM once.counter_full WHERE name = $1 AND key = $2
)
SELECT cap FROM f WHERE cap >= $3::bigint
AND NOT EXISTS (SELECT FROM once.counter_slots AS t WHERE t.name = $1 AND t.key = $2 AND t.slot >= (SELECT cap FROM f))`

// fullMark is fullSQL's answer: whether the key is marked full, at which cap.
type fullMark struct {
	cap  int64
	full bool
}

// readFull sends fullSQL.
func readFull(ctx context.Context, db DB, name, key string, capacity int64) (fullMark, error) {
	var m fullMark
	switch err := db.QueryRow(ctx, fullSQL, name, key, capacity).Scan(&m.cap); {
	case err == nil:
		m.full = true
	case !errors.Is(err, pgx.ErrNoRows):
		return fullMark{}, err
	}
	return m, nil
}

// fullReads shares the reads of full marks among a process's concurrent refusals of a key.
var fullReads sharedReads[fullMark]

// firstSQL is the reservation of one unit of a key that holds none, sent while most of a
// guard's keys are new: $1 name, $2 key, $3 a slot below the cap, $4 the token. It inserts the
// slot only if the key has no slot in the statement's snapshot, where the key's count is 0 and
// one unit fits under any cap of 1 or more; the primary key decides between it and a
// reservation racing it, as in reserveSQL. Nothing inserted (the key holds units, or another
// reservation took that slot) sends reserveSQL next: a new key's reservation is a plain
// insert and one index probe, with no count, walk or mark to read.
const firstSQL = `INSERT INTO once.counter_slots (name, key, slot, token)
SELECT $1::text, $2::text, $3::bigint, $4::text
WHERE NOT EXISTS (SELECT FROM once.counter_slots WHERE name = $1::text AND key = $2::text)
ON CONFLICT (name, key, slot) DO NOTHING`

// Every delete of slots also writes the key's row of once.counter_full (the schema's
// trigger), which stays locked until the deleting transaction ends: two transactions that
// each give back units of two keys, in opposite orders, can deadlock (SQLSTATE 40P01); and
// a key whose units were ever given back keeps its row, an epoch, for good.
//
// giveBackSQL deletes reservations' slots by their tokens: the refund of Do's failed work,
// the undoing of an attempt that got only some of its n slots, the clean-up of reservations
// whose answer the caller did not see, and the slots of a group's members that left. Slots a
// Refund already gave back are not given back twice.
const giveBackSQL = `DELETE FROM once.counter_slots WHERE name = $1 AND key = $2 AND token = ANY($3::text[])`

// refundSQL deletes n of the key's slots, the highest first, or none if it holds fewer than
// n that no other refund is deleting.
const refundSQL = `WITH gone AS (
	SELECT slot FROM once.counter_slots WHERE name = $1::text AND key = $2::text
	ORDER BY slot DESC LIMIT $3::bigint FOR UPDATE SKIP LOCKED
), refunded AS (
	DELETE FROM once.counter_slots AS s USING gone
	WHERE s.name = $1::text AND s.key = $2::text AND s.slot = gone.slot AND (SELECT count(*) FROM gone) = $3::bigint
	RETURNING 1
)
SELECT count(*) FROM refunded`

// maxGroupRounds bounds the groups a one-unit reservation on a pool goes in before it
// reserves alone: it goes in another only when its group's other members took the slots left,
// or the slot picked for it was taken, each time after other callers' reservations.
const maxGroupRounds = 4

// maxReserveAttempts bounds the attempts of one reservation. An attempt is repeated only when
// another reservation took a slot it picked, so every repeat follows another caller's
// success; the bound only stops a caller starved by reservations and refunds that keep
// taking and freeing slots under it.
const maxReserveAttempts = 1000

// Reserve adds n units to the key's counter if the total stays within Cap. It returns the
// units used after the call (the count read in the reservation's snapshot, plus n if it was
// made, plus, for a reservation made in a group, the group's other units) and whether this
// reservation was made. A refusal is not an error: ok is false and
// used is the key's count. A refusal takes no lock and writes nothing, but for the first
// refusal of a key found full, which marks it full for the refusals after it (waiting, if a
// transaction is giving back units of the key, for that transaction to end). A reservation
// is one statement unless it lost a race for a slot; while most of the guard's reservations
// are refused, it first reads the key's mark, and a refusal of a marked key is that read
// alone. On a pool, callers of one key that arrive together share that read: a caller joins
// only a read not yet sent, so its answer is from a snapshot taken during its call, as its
// own read's would be (see sharedReads). On a pool, reservations of one unit of a key that
// arrive while another reservation of it is on its way go in one statement and one commit,
// each with a slot and a token of its own; a refusal there too is a snapshot, taken during
// the call, that showed the key full (see reservationGroups).
//
// If ctx ends while the reservation is on its way, the reservation is looked for and given
// back (see Do), so a caller that never learned of it does not keep its units.
func (g Statement) Reserve(ctx context.Context, db DB, key string, n int64) (used int64, ok bool, err error) {
	if err := g.check(ctx, db, key, n); err != nil {
		return 0, false, err
	}
	used, ok, err = g.reserve(ctx, db, key, n, newToken())
	if err == nil && !ok {
		countAnswered(db, "statement", g.Name, Refused)
	}
	return used, ok, err
}

// reserve reserves n units under token, giving them back if the answer is lost.
func (g Statement) reserve(ctx context.Context, db DB, key string, n int64, token string) (used int64, ok bool, err error) {
	if m := memoryOf(db); m != nil {
		used, ok = g.memoryReserve(m, key, n, token)
		return used, ok, nil
	}
	history := reserveHistoryOf(g.Name)
	markRead := false
	// On a pool, callers of the key in this process share reads and statements (a
	// transaction or a connection serves one caller).
	pool, onPool := db.(*pgxpool.Pool)
	shared := sharedReadKey{pool, g.Name, key, g.Cap}
	if onPool && history.refused.readFirst() {
		// A storm past the cap: the refusal is the mark's read, shared with the guard's
		// other callers of the key that arrive with this one (see sharedReads).
		mark, err := fullReads.read(ctx, shared, func(ctx context.Context) (fullMark, error) {
			return readFull(ctx, pool, g.Name, key, g.Cap)
		})
		if err != nil {
			return 0, false, classify(g.reserveErr(n, err))
		}
		if mark.full {
			history.record(true, true)
			return mark.cap, false, nil
		}
		markRead = true
	}
	if onPool && n == 1 && g.Cap >= 1 {
		// A reservation of one unit goes alone if no other one-unit reservation of the key
		// on this pool is registered as on its way in this process, and otherwise in a
		// group with the callers that arrive with it (see reservationGroups).
		gs := g.groupSend(pool, key)
		for range maxGroupRounds {
			ans, grouped, err := reservations.reserve(ctx, shared, token, gs, func() error {
				var err error
				used, ok, err = g.reserveAlone(ctx, db, key, n, token, history, markRead)
				return err
			})
			switch {
			case !grouped:
				return used, ok, err
			case err != nil:
				return 0, false, classify(g.reserveErr(n, err))
			case ans.reserved[token]:
				history.record(false, ans.used > 0)
				return ans.used + int64(len(ans.reserved)), true, nil
			case ans.used >= g.Cap:
				// Full in the statement's snapshot, a moment during this call.
				history.record(true, true)
				return ans.used, false, nil
			}
			// The group's other members took the slots left, or the slot picked for this
			// caller was taken meanwhile. Neither shows the key full at a moment of this call
			// (a unit may have been given back before the group's slots landed), so it asks
			// again, in a group sent after this one's answer, whose snapshot sees its slots
			// (or alone, if no other reservation of the key is on its way).
		}
		markRead = true
	}
	return g.reserveAlone(ctx, db, key, n, token, history, markRead)
}

// reserveAlone sends the reservation's attempts on a connection of db, and gives the
// reservation back if its answer is lost.
func (g Statement) reserveAlone(ctx context.Context, db DB, key string, n int64, token string, history *reserveHistory, markRead bool) (used int64, ok bool, err error) {
	site, err := sendClaim(ctx, db, func(cdb DB) error {
		var err error
		used, ok, err = g.attempts(ctx, cdb, key, n, token, history, markRead)
		return err
	})
	if err != nil {
		return 0, false, classify(resolveClaim(ctx, db, site, g.reserveErr(n, err), g.withdrawUnseen(key, token)))
	}
	return used, ok, nil
}

// reserveErr says which guard's reservation of n units err ended.
func (g Statement) reserveErr(n int64, err error) error {
	return fmt.Errorf("once: statement guard %s: reserve %d: %w", g.Name, n, err)
}

// attempts sends reserveSQL until the reservation is made or refused, recording its first
// answer in the guard's history: first fullSQL, while most of the guard's reservations are
// refused (unless markRead: the caller read the mark already and found the key not full),
// or firstSQL for one unit, while most of its keys hold none.
func (g Statement) attempts(ctx context.Context, db DB, key string, n int64, token string, history *reserveHistory, markRead bool) (used int64, ok bool, err error) {
	switch {
	case markRead:
	case history.refused.readFirst():
		mark, err := readFull(ctx, db, g.Name, key, g.Cap)
		if err != nil {
			return 0, false, err
		}
		if mark.full {
			history.record(true, true)
			return mark.cap, false, nil
		}
	case n == 1 && g.Cap >= 1 && !history.busy.readFirst():
		first, _ := slotWalk(g.Cap)
		tag, err := db.Exec(ctx, firstSQL, g.Name, key, first, token)
		if err != nil {
			return 0, false, err
		}
		if tag.RowsAffected() == 1 {
			history.record(false, false)
			return 1, true, nil
		}
	}
	for attempt := range maxReserveAttempts {
		first, stride := slotWalk(g.Cap)
		var got int64
		if err := db.QueryRow(ctx, reserveSQL, g.Name, key, n, g.Cap, first, stride, token).Scan(&used, &got); err != nil {
			return 0, false, err
		}
		if attempt == 0 {
			history.record(used+n > g.Cap, used > 0)
		}
		if got == n {
			return used + n, true, nil
		}
		if got > 0 {
			// Some of the n slots were free, some taken meanwhile: a reservation is all or
			// nothing, so these go back before the next attempt.
			if _, err := g.giveBack(ctx, db, key, token); err != nil {
				return 0, false, fmt.Errorf("giving back %d of %d units: %w", got, n, err)
			}
		}
		if used+n > g.Cap {
			return used, false, nil
		}
	}
	return 0, false, fmt.Errorf("%d attempts each lost the slots they picked to other reservations: %w", maxReserveAttempts, ErrRetryable)
}

// slotWalk picks where a reservation starts looking for free slots below capacity, and a
// stride coprime with it, so that the walk visits every slot once.
func slotWalk(capacity int64) (first, stride int64) {
	if capacity <= 1 {
		return 0, 1
	}
	first = rand.Int64N(capacity)
	for {
		stride = 1 + rand.Int64N(capacity-1)
		if gcd(stride, capacity) == 1 {
			return first, stride
		}
	}
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// groupSend sends the statement of a group of key's one-unit reservations on pool, and
// gives back the slots of members that left it.
func (g Statement) groupSend(pool *pgxpool.Pool, key string) groupSend {
	return groupSend{
		send: func(ctx context.Context, tokens []string) (groupAnswer, error) {
			first, stride := slotWalk(g.Cap)
			var ans groupAnswer
			var reserved []string
			site, err := sendClaim(ctx, pool, func(c DB) error {
				return c.QueryRow(ctx, groupReserveSQL, g.Name, key, tokens, g.Cap, first, stride).Scan(&ans.used, &reserved)
			})
			if err != nil {
				return groupAnswer{}, resolveClaim(ctx, pool, site, err, g.withdrawUnseen(key, tokens...))
			}
			ans.reserved = make(map[string]bool, len(reserved))
			for _, t := range reserved {
				ans.reserved[t] = true
			}
			return ans, nil
		},
		giveBack: func(ctx context.Context, tokens []string) error {
			_, err := g.giveBack(ctx, pool, key, tokens...)
			return err
		},
	}
}

// giveBack deletes the slots of key reserved under tokens (see giveBackSQL) and returns how
// many it deleted.
func (g Statement) giveBack(ctx context.Context, db DB, key string, tokens ...string) (int64, error) {
	if m := memoryOf(db); m != nil {
		return g.memoryGiveBack(m, key, tokens...), nil
	}
	tag, err := db.Exec(ctx, giveBackSQL, g.Name, key, tokens)
	return tag.RowsAffected(), err
}

// withdrawUnseen gives back the reservations made under tokens, whose answers their callers
// did not see.
func (g Statement) withdrawUnseen(key string, tokens ...string) withdrawal {
	return func(ctx context.Context, db DB) (bool, error) {
		n, err := g.giveBack(ctx, db, key, tokens...)
		if err != nil {
			return false, fmt.Errorf("once: statement guard %s: giving back unseen reservations: %w", g.Name, err)
		}
		return withdrew(n), nil
	}
}

// Refund gives back n units reserved earlier, for work that was not delivered: an allowance
// counts only what the customer received. Refunding more than the counter holds is refused
// with ErrInvalid and changes nothing.
func (g Statement) Refund(ctx context.Context, db DB, key string, n int64) error {
	if err := g.check(ctx, db, key, n); err != nil {
		return err
	}
	if m := memoryOf(db); m != nil {
		return g.memoryRefund(m, key, n)
	}
	var refunded int64
	if err := db.QueryRow(ctx, refundSQL, g.Name, key, n).Scan(&refunded); err != nil {
		return fmt.Errorf("once: statement guard %s: refund %d: %w", g.Name, n, err)
	}
	if refunded == 0 {
		return invalid("statement", g.Name, "refund of %d for key %q exceeds the units reserved", n, key)
	}
	return nil
}

// Do reserves n units for key and, if they were reserved, runs fn. If fn returns an error the
// units are refunded (the work was not delivered) and fn's error is returned. When the cap
// would be exceeded, fn does not run and Do returns Outcome{Status: Refused, Count: the
// units used} with a nil error: a full allowance is an answer, not a failure.
//
// The refund runs even when ctx was cancelled during fn, so a cancelled request does not
// keep its units; a panicking fn is refunded too. It gives back this call's own units (by
// the reservation's token), not any n of the key's. Outcome.Count is the count the
// reservation returned.
//
// A reservation whose answer ctx cut off (it may have landed or not) is given back at once,
// on a short context of its own, once the server process that ran it has ended; Do then
// returns the context's error. A reservation made in a group (see reservationGroups) is
// given back as soon as the group's statement is answered; if the group's other members
// still wait for that answer, Do waits for it a second at most, and the group gives the
// unit back when the answer comes. Where that clean-up cannot reach the database, the units
// stay held until refunded.
func (g Statement) Do(ctx context.Context, db DB, key string, n int64, fn func(context.Context) error) (Outcome, error) {
	if fn == nil {
		return Outcome{}, invalid("statement", g.Name, "nil function")
	}
	if err := g.check(ctx, db, key, n); err != nil {
		return Outcome{}, err
	}
	token := newToken()
	used, ok, err := g.reserve(ctx, db, key, n, token)
	if err != nil {
		return Outcome{}, err
	}
	if !ok {
		countAnswered(db, "statement", g.Name, Refused)
		return Outcome{Status: Refused, Count: used}, nil
	}
	out := Outcome{Status: Ran, Count: used}
	err = callUndoing(ctx, fn, func(sctx context.Context, _ error) error {
		if _, err := g.giveBack(sctx, db, key, token); err != nil {
			return fmt.Errorf("once: statement guard %s: refund %d: %w", g.Name, n, err)
		}
		return nil
	})
	return out, err
}

func (g Statement) check(ctx context.Context, db DB, key string, n int64) error {
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
