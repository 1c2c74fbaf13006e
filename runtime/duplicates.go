package once

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// Calls answered without running are counted by the process that answered them, not by a
// write per call: a duplicate answered from a recorded row writes nothing (see fireSQL,
// claimOrReadSQL), and a storm must not queue on a counter's row lock. Each process keeps,
// per database, UTC day, guard kind and name and Status (the statuses Status.Answered
// reports), how many calls it answered, and adds them to once.duplicate_days in one
// statement at most every DuplicateFlushInterval, and when FlushDuplicates is called.
//
// Where the counts go is the DB the call was made on. A *pgxpool.Pool or an SQLDB is shared
// by the whole process, so its counts are written on it by a timer that the first count
// after a write arms: one timer for each database with counts waiting, none while there
// are none, and no goroutine per guard. A pgx.Tx, a *pgx.Conn or another DB serves one
// caller at a time and may be gone when the timer fires, so the calls answered on them are
// held for the process and written by the next FlushDuplicates. The in-memory stand-in
// (oncetest.Memory) counts nothing: it has no table to add to.
//
// A write that fails never reaches the guard calls: they only add to memory. Counts whose
// write PostgreSQL refused, or that were never sent, are kept and written again (a timer
// retries a few times, then the next count or FlushDuplicates does); counts whose write may
// or may not have landed (the connection broke after sending it) are dropped rather than
// risk adding them twice, and DuplicateCounts reports them. A process that dies loses what
// it counted since its last write.

// DuplicateFlushInterval is the longest a call answered without running stays counted only
// in its process's memory while the process lives (on a pool or an SQLDB).
const DuplicateFlushInterval = 10 * time.Second

// duplicateFlushTimeout bounds one timed write of the counts.
const duplicateFlushTimeout = 5 * time.Second

// timedRetries is how many timed writes in a row may fail before the timer waits for a new
// count to try again: a closed pool stops costing a timer.
const timedRetries = 3

// flushDuplicatesSQL adds counts to their rows, in key order: two processes writing the
// same rows lock them in the same order, so their writes never deadlock.
const flushDuplicatesSQL = `INSERT INTO once.duplicate_days AS d (day, name, kind, status, answered)
SELECT * FROM unnest($1::date[], $2::text[], $3::text[], $4::text[], $5::bigint[]) ORDER BY 1, 2, 3, 4
ON CONFLICT (day, name, kind, status) DO UPDATE SET answered = d.answered + excluded.answered`

// answeredKey is what a count is kept by: the UTC day (days since 1970-01-01), the guard
// and why its call did not run.
type answeredKey struct {
	day        int32
	kind, name string
	status     Status
}

// tally is one database's counts not yet written.
type tally struct {
	// db is where a timed write goes: the shared DB whose calls these are, or nil for the
	// calls held for FlushDuplicates.
	db     DB
	mu     sync.Mutex
	counts map[answeredKey]int64
	armed  bool // a timed write is scheduled
	failed int  // timed writes failed in a row
	// sending is how many calls the write under way holds: still pending until it lands.
	sending int64
	// writing holds a token while a write is under way: writes take turns, and a flush
	// waits (as long as its context lets it) for a timed write, then writes what it gave back.
	writing chan struct{}
}

var (
	// tallies maps a *pgxpool.Pool or *sqlDB to its *tally.
	tallies sync.Map
	// heldTally holds the calls answered on a DB no timer can write on.
	heldTally = newTally(nil)
	// duplicatesWritten and duplicatesDropped count calls, over the process's life.
	duplicatesWritten, duplicatesDropped atomic.Int64
	// flushEvery is DuplicateFlushInterval, and flushSQL flushDuplicatesSQL, but in a test
	// that shortens the one or shows that a write that sets a count, not adds to it, is
	// caught (atomic, since timers read them as a test changes them).
	flushEvery atomic.Int64
	flushSQL   atomic.Pointer[string]
)

func init() {
	flushEvery.Store(int64(DuplicateFlushInterval))
	sql := flushDuplicatesSQL
	flushSQL.Store(&sql)
}

// newTally returns an empty tally of the calls answered on db.
func newTally(db DB) *tally {
	return &tally{db: db, counts: map[answeredKey]int64{}, writing: make(chan struct{}, 1)}
}

// tallyOf returns the counts db's calls add to, or nil for the stand-in.
func tallyOf(db DB) *tally {
	switch db.(type) {
	case *pgxpool.Pool, *sqlDB:
	default:
		if memoryOf(db) != nil {
			return nil
		}
		return heldTally
	}
	if t, ok := tallies.Load(db); ok {
		return t.(*tally)
	}
	t, _ := tallies.LoadOrStore(db, newTally(db))
	return t.(*tally)
}

// countAnswered counts one call of the guard that did not run, if its status is one a call
// is answered with. It only adds in memory (and, for the first count after a write, arms
// the timer), so a guard's answer never waits for the count's write.
func countAnswered(db DB, kind, name string, s Status) {
	if !s.Answered() {
		return
	}
	t := tallyOf(db)
	if t == nil {
		return
	}
	k := answeredKey{day: int32(time.Now().Unix() / 86400), kind: kind, name: name, status: s}
	t.mu.Lock()
	t.counts[k]++
	arm := t.db != nil && !t.armed
	if arm {
		t.armed, t.failed = true, 0
	}
	t.mu.Unlock()
	if arm {
		time.AfterFunc(time.Duration(flushEvery.Load()), t.timedWrite)
	}
}

// timedWrite writes the tally's counts on its own DB, on a context of its own.
func (t *tally) timedWrite() {
	ctx, cancel := context.WithTimeout(context.Background(), duplicateFlushTimeout)
	defer cancel()
	t.mu.Lock()
	t.armed = false
	t.mu.Unlock()
	if err := t.write(ctx, t.db); err != nil {
		t.mu.Lock()
		t.failed++
		arm := len(t.counts) > 0 && !t.armed && t.failed < timedRetries
		if arm {
			t.armed = true
		}
		t.mu.Unlock()
		if arm {
			time.AfterFunc(time.Duration(flushEvery.Load()), t.timedWrite)
		}
	}
}

// take empties the tally and returns what it held, and how many calls that is, counted as
// sending until done.
func (t *tally) take() (map[answeredKey]int64, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	counts := t.counts
	t.counts = make(map[answeredKey]int64, len(counts))
	var total int64
	for _, n := range counts {
		total += n
	}
	t.sending += total
	return counts, total
}

// done ends the write of what take returned, by the write's error: written, given back to be
// written again, or dropped, in one step with the tally, so DuplicateCounts never misses
// them in between.
func (t *tally) done(counts map[answeredKey]int64, total int64, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sending -= total
	switch {
	case err == nil:
		duplicatesWritten.Add(total)
	case notWritten(err):
		for k, n := range counts {
			t.counts[k] += n
		}
	default:
		duplicatesDropped.Add(total)
	}
}

// write adds the tally's counts to once.duplicate_days on db, in one statement, once the
// write under way, if any, is done: each count is sent once, and a flush that returns has
// written what was counted before it.
func (t *tally) write(ctx context.Context, db DB) error {
	select {
	case t.writing <- struct{}{}:
		defer func() { <-t.writing }()
	case <-ctx.Done():
		return ctx.Err()
	}
	counts, total := t.take()
	if len(counts) == 0 {
		return nil
	}
	keys := make([]answeredKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b answeredKey) int {
		return cmp.Or(cmp.Compare(a.day, b.day), cmp.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind),
			cmp.Compare(a.status.String(), b.status.String()))
	})
	days := make([]time.Time, len(keys))
	names, kinds, statuses := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	answered := make([]int64, len(keys))
	for i, k := range keys {
		days[i] = time.Unix(int64(k.day)*86400, 0).UTC()
		names[i], kinds[i], statuses[i], answered[i] = k.name, k.kind, k.status.String(), counts[k]
	}
	_, err := db.Exec(ctx, *flushSQL.Load(), days, names, kinds, statuses, answered)
	t.done(counts, total, err)
	return err
}

// notWritten reports whether a failed write surely added nothing: PostgreSQL refused the
// statement (which ran in a transaction of its own), or it was never sent.
func notWritten(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) || pgconn.SafeToRetry(err)
}

// FlushDuplicates writes on db, now, the calls this process answered without running that
// are not written yet: those made on db, and those held from calls on a pgx.Tx or a
// *pgx.Conn. Call it at shutdown, after the last guard call (a pool's counts are otherwise
// written at most DuplicateFlushInterval after they were counted), and from time to time in a
// program that calls its guards inside transactions. It waits for a timed write under
// way, so what was counted before the call is written when it returns. Counts it could not
// write are kept for the next write when PostgreSQL refused the statement or it was never
// sent, and dropped (see DuplicateCounts) when it may have landed. On the in-memory
// stand-in it writes nothing: the stand-in counts nothing.
func FlushDuplicates(ctx context.Context, db DB) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	own := tallyOf(db)
	if own == nil {
		return nil
	}
	var errs []error
	if own != heldTally {
		errs = append(errs, own.write(ctx, db))
	}
	errs = append(errs, heldTally.write(ctx, db))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("once: writing the calls answered without running: %w", err)
	}
	return nil
}

// DuplicateCount is a process's account of the calls it answered without running.
type DuplicateCount struct {
	// Pending are counted and not written yet.
	Pending int64
	// Written were added to once.duplicate_days.
	Written int64
	// Dropped were lost to writes that failed after they were sent, which may or may not
	// have landed: not sent again, so never added twice.
	Dropped int64
}

// DuplicateCounts returns this process's account of the calls it answered without running,
// over its life, for its metrics.
func DuplicateCounts() DuplicateCount {
	var c DuplicateCount
	add := func(t *tally) {
		t.mu.Lock()
		defer t.mu.Unlock()
		c.Pending += t.sending
		for _, n := range t.counts {
			c.Pending += n
		}
	}
	add(heldTally)
	tallies.Range(func(_, t any) bool { add(t.(*tally)); return true })
	// Read after the tallies: a write that lands meanwhile is counted twice, never missed.
	c.Written, c.Dropped = duplicatesWritten.Load(), duplicatesDropped.Load()
	return c
}
