package onceui

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The console's reads. Each list is one statement, filtered by the URL's query and paged by
// its keyset (the columns it is ordered by), on an index that covers the rows it shows.

// pageSize is how many rows a list page shows.
const pageSize = 50

// guardRow is a row of the overview: one guard name of one kind.
type guardRow struct {
	Kind, Name                                 string
	Calls, Done, Failed, Released, InFlight    int64
	Uncertain, Retried, Stale, Set, Used, Held int64
	// Answered counts the calls answered without running, by why (once.duplicate_days).
	Answered answered
}

// answered is a guard's calls answered without running, by the status they were answered
// with.
type answered struct{ Duplicate, InFlight, Refused, Busy int64 }

// Total is every call answered without running: the work duplicates did not cost.
func (a answered) Total() int64 { return a.Duplicate + a.InFlight + a.Refused + a.Busy }

// add adds a count of status (as once.Status spells it) to a.
func (a *answered) add(status string, n int64) {
	switch status {
	case "duplicate":
		a.Duplicate += n
	case "in flight":
		a.InFlight += n
	case "refused":
		a.Refused += n
	case "busy":
		a.Busy += n
	}
}

// dayCount is a day of the overview's charts: the operations done that day and the calls
// answered without running.
type dayCount struct {
	Day            time.Time
	Done, Answered int64
}

// window is where an overview's counts come from: the claims at or after Start, the days
// [RolledFrom, RolledTo) from their roll-ups (once.guard_days), the rest from the claims.
type window struct {
	Start, RolledFrom, RolledTo time.Time
	// RolledAt is when the last of those days was rolled up (zero if none is).
	RolledAt time.Time
}

// overviewWindow finds the rolled-up days inside the window of the last since: whole UTC
// days, from the first rolled up to the last, that start at or after the window does.
func overviewWindow(ctx context.Context, db querier, since time.Duration) (window, error) {
	var w window
	var now time.Time
	var first, last, at *time.Time
	if err := db.QueryRow(ctx, `SELECT statement_timestamp(), min(day), max(day), max(rolled_at) FROM once.rolled_days`).
		Scan(&now, &first, &last, &at); err != nil {
		return w, err
	}
	w.Start = now.Add(-since)
	w.RolledFrom, w.RolledTo = w.Start, w.Start
	if first == nil {
		return w, nil
	}
	from := w.Start.UTC().Truncate(24 * time.Hour)
	if from.Before(w.Start) {
		from = from.AddDate(0, 0, 1)
	}
	if f := dateUTC(*first); f.After(from) {
		from = f
	}
	to := dateUTC(*last).AddDate(0, 0, 1)
	if to.After(from) {
		w.RolledFrom, w.RolledTo, w.RolledAt = from, to, *at
	}
	return w, nil
}

// dateUTC is the UTC midnight of a date column as pgx reads it.
func dateUTC(d time.Time) time.Time {
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
}

// The overview's reads. The calls of a window are the rolled-up days' rows plus a count of
// the claims on the days not rolled up (at most the window's first partial day and the days
// since the last roll-up: block ranges of the BRIN indexes on claimed_at and opened_at).
// What is counted as it stands now is read on small indexes: uncertain operations on their
// partial index, open claims on theirs.
const (
	overviewForeverSQL = `SELECT name, day, calls, done, failed, released, in_flight, retried FROM once.guard_days
WHERE kind = 'forever' AND day >= ($2::timestamptz AT TIME ZONE 'UTC')::date AND day < ($3::timestamptz AT TIME ZONE 'UTC')::date
UNION ALL
SELECT name, (claimed_at AT TIME ZONE 'UTC')::date, count(*), count(*) FILTER (WHERE state = 'done'),
	count(*) FILTER (WHERE state = 'failed'), count(*) FILTER (WHERE state = 'released'), count(*) FILTER (WHERE state = 'open'),
	coalesce(sum(attempts - 1), 0)
FROM once.operations WHERE (claimed_at >= $1 AND claimed_at < $2) OR claimed_at >= $3 GROUP BY 1, 2`
	overviewUncertainSQL = `SELECT name, count(*) FROM once.operations
WHERE uncertain_since IS NOT NULL AND state = 'uncertain' AND claimed_at >= $1 GROUP BY name`
	overviewOpenSQL = `SELECT name, sum(calls), sum(done), sum(failed), sum(stale) FROM (
	SELECT name, calls, done, failed, stale FROM once.guard_days
	WHERE kind = 'open' AND day >= ($2::timestamptz AT TIME ZONE 'UTC')::date AND day < ($3::timestamptz AT TIME ZONE 'UTC')::date
	UNION ALL
	SELECT name, 1, (state = 'done')::int, (state = 'failed')::int, (state = 'stale')::int FROM once.open_claims
	WHERE (opened_at >= $1 AND opened_at < $2) OR opened_at >= $3
) c GROUP BY name`
	overviewOpenNowSQL = `SELECT name, count(*), count(*) FILTER (WHERE alive_at < clock_timestamp() - stale_after)
FROM once.open_claims WHERE state = 'open' GROUP BY name`
	// The calls answered without running, as the processes wrote them: whole UTC days, from
	// the day the window starts in (a range of its primary key).
	overviewAnsweredSQL = `SELECT kind, name, day, status, answered FROM once.duplicate_days
WHERE day >= ($1::timestamptz AT TIME ZONE 'UTC')::date`
)

// overviewRead is one of the overview's reads: its SQL, its arguments, and how a row of it
// becomes a part of a guard's row (parts of one guard are added up) and of a day's bar.
type overviewRead struct {
	sql  string
	args []any
	scan func(r pgx.Rows, g *guardRow, day *dayCount) error
}

func overview(ctx context.Context, db querier, since time.Duration) ([]guardRow, []dayCount, window, error) {
	w, err := overviewWindow(ctx, db, since)
	if err != nil {
		return nil, nil, w, err
	}
	bounds := []any{w.Start, w.RolledFrom, w.RolledTo}
	reads := []overviewRead{
		{overviewForeverSQL, bounds, func(r pgx.Rows, g *guardRow, d *dayCount) error {
			g.Kind = "forever"
			err := r.Scan(&g.Name, &d.Day, &g.Calls, &g.Done, &g.Failed, &g.Released, &g.InFlight, &g.Retried)
			d.Day, d.Done = dateUTC(d.Day), g.Done
			return err
		}},
		{overviewAnsweredSQL, []any{w.Start}, func(r pgx.Rows, g *guardRow, d *dayCount) error {
			var status string
			var n int64
			err := r.Scan(&g.Kind, &g.Name, &d.Day, &status, &n)
			g.Answered.add(status, n)
			d.Day, d.Answered = dateUTC(d.Day), n
			return err
		}},
		{overviewUncertainSQL, []any{w.Start}, func(r pgx.Rows, g *guardRow, _ *dayCount) error {
			g.Kind = "forever"
			return r.Scan(&g.Name, &g.Uncertain)
		}},
		{overviewOpenSQL, bounds, func(r pgx.Rows, g *guardRow, _ *dayCount) error {
			g.Kind = "open"
			return r.Scan(&g.Name, &g.Calls, &g.Done, &g.Failed, &g.Stale)
		}},
		{overviewOpenNowSQL, nil, func(r pgx.Rows, g *guardRow, _ *dayCount) error {
			g.Kind = "open"
			return r.Scan(&g.Name, &g.InFlight, &g.Stale)
		}},
		{`SELECT name, coalesce(sum(firings), 0), count(*) FILTER (WHERE fired_at IS NOT NULL) FROM once.latches GROUP BY name`, nil,
			func(r pgx.Rows, g *guardRow, _ *dayCount) error {
				g.Kind = "episode"
				return r.Scan(&g.Name, &g.Calls, &g.Set)
			}},
		{`SELECT name, count(*) FROM once.counter_slots GROUP BY name`, nil, func(r pgx.Rows, g *guardRow, _ *dayCount) error {
			g.Kind = "statement"
			return r.Scan(&g.Name, &g.Used)
		}},
		{`SELECT name, count(*) FILTER (WHERE released_at IS NULL AND expires_at > clock_timestamp()) FROM once.leases GROUP BY name`, nil,
			func(r pgx.Rows, g *guardRow, _ *dayCount) error {
				g.Kind = "lease"
				return r.Scan(&g.Name, &g.Held)
			}},
	}
	type part struct {
		g guardRow
		d dayCount
	}
	parts := make([][]part, len(reads))
	errs := make([]error, len(reads))
	read := func(i int) {
		rs, err := db.Query(ctx, reads[i].sql, reads[i].args...)
		if err != nil {
			errs[i] = err
			return
		}
		defer rs.Close()
		for rs.Next() {
			var p part
			if err := reads[i].scan(rs, &p.g, &p.d); err != nil {
				errs[i] = err
				return
			}
			parts[i] = append(parts[i], p)
		}
		errs[i] = rs.Err()
	}
	// A pool answers the reads side by side, each on a connection of its own: the page
	// waits for the slowest read, not for their sum. A single connection reads in turn.
	if _, ok := db.(*pgxpool.Pool); ok {
		var wg sync.WaitGroup
		for i := range reads {
			wg.Go(func() { read(i) })
		}
		wg.Wait()
	} else {
		for i := range reads {
			read(i)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, w, err
	}
	type id struct{ kind, name string }
	byGuard := map[id]*guardRow{}
	byDay := map[time.Time]dayCount{}
	for _, ps := range parts {
		for _, p := range ps {
			g := byGuard[id{p.g.Kind, p.g.Name}]
			if g == nil {
				g = &guardRow{Kind: p.g.Kind, Name: p.g.Name}
				byGuard[id{p.g.Kind, p.g.Name}] = g
			}
			g.add(p.g)
			if !p.d.Day.IsZero() {
				d := byDay[p.d.Day]
				d.Done += p.d.Done
				d.Answered += p.d.Answered
				byDay[p.d.Day] = d
			}
		}
	}
	rows := make([]guardRow, 0, len(byGuard))
	for _, g := range byGuard {
		rows = append(rows, *g)
	}
	// The kinds in the order the page has always listed them, then by name.
	order := map[string]int{"forever": 0, "open": 1, "episode": 2, "statement": 3, "lease": 4, "transaction": 5, "table": 6}
	slices.SortFunc(rows, func(a, b guardRow) int {
		if c := cmp.Compare(order[a.Kind], order[b.Kind]); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	days := make([]dayCount, 0, len(byDay))
	for d, c := range byDay {
		c.Day = d
		days = append(days, c)
	}
	return rows, days, w, nil
}

// add adds the counts of o, a part of g's row from one of the overview's reads.
func (g *guardRow) add(o guardRow) {
	g.Calls += o.Calls
	g.Done += o.Done
	g.Failed += o.Failed
	g.Released += o.Released
	g.InFlight += o.InFlight
	g.Uncertain += o.Uncertain
	g.Retried += o.Retried
	g.Stale += o.Stale
	g.Set += o.Set
	g.Used += o.Used
	g.Held += o.Held
	g.Answered.Duplicate += o.Answered.Duplicate
	g.Answered.InFlight += o.Answered.InFlight
	g.Answered.Refused += o.Answered.Refused
	g.Answered.Busy += o.Answered.Busy
}

// opRow is an operation as the lists and its detail page show it.
type opRow struct {
	ID, Name, Scope, Key, State, Error, Fingerprint, RecoveryPoint string
	Attempts                                                       int64
	Result                                                         []byte
	ResultForm                                                     string // result_form: "" for a plain result
	ClaimedAt, AliveAt                                             time.Time
	SettledAt, ExpiresAt, UncertainSince                           *time.Time
}

const opColumns = `id::text, name, scope, key, state::text, coalesce(error, ''), coalesce(encode(fingerprint, 'hex'), ''),
	coalesce(recovery_point, ''), attempts, result, coalesce(result_form, ''), claimed_at, alive_at, settled_at, expires_at, uncertain_since`

func scanOp(r pgx.CollectableRow) (opRow, error) {
	var o opRow
	err := r.Scan(&o.ID, &o.Name, &o.Scope, &o.Key, &o.State, &o.Error, &o.Fingerprint, &o.RecoveryPoint, &o.Attempts,
		&o.Result, &o.ResultForm, &o.ClaimedAt, &o.AliveAt, &o.SettledAt, &o.ExpiresAt, &o.UncertainSince)
	return o, err
}

// listUncertain pages the uncertain operations oldest first, on the operations_uncertain
// partial index; older than age when age is not zero.
func listUncertain(ctx context.Context, db querier, name, scope string, age time.Duration, afterAt time.Time, afterID string) ([]opRow, error) {
	rs, err := db.Query(ctx, `SELECT `+opColumns+` FROM once.operations
WHERE uncertain_since IS NOT NULL AND state = 'uncertain' AND ($1 = '' OR name = $1) AND ($2 = '' OR scope = $2)
	AND uncertain_since <= statement_timestamp() - $3::interval AND (uncertain_since, id) > ($4, $5::uuid)
ORDER BY uncertain_since, id LIMIT $6`, name, scope, age, afterAt, afterID, pageSize+1)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, scanOp)
}

// lookupOp reads one operation by its primary key.
func lookupOp(ctx context.Context, db querier, name, scope, key string) (opRow, error) {
	rs, err := db.Query(ctx, `SELECT `+opColumns+` FROM once.operations WHERE name = $1 AND scope = $2 AND key = $3`, name, scope, key)
	if err != nil {
		return opRow{}, err
	}
	return pgx.CollectExactlyOneRow(rs, scanOp)
}

type ledgerRow struct {
	Kind, Unit string
	Quantity   int64
	Detail     []byte
	RecordedAt time.Time
}

// ledgerOf reads an operation's ledger, on the (operation_id, kind, unit) unique index.
func ledgerOf(ctx context.Context, db querier, id string) ([]ledgerRow, error) {
	rs, err := db.Query(ctx, `SELECT kind, unit, quantity, detail, recorded_at FROM once.ledger
WHERE operation_id = $1::uuid ORDER BY kind, unit`, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, func(r pgx.CollectableRow) (ledgerRow, error) {
		var l ledgerRow
		return l, r.Scan(&l.Kind, &l.Unit, &l.Quantity, &l.Detail, &l.RecordedAt)
	})
}

type claimRow struct {
	ID                int64
	Name, Key, Stale  string
	OpenedAt, AliveAt time.Time
	PastStale         bool
}

// listClaims pages the open claims by name and key, on their partial unique index.
func listClaims(ctx context.Context, db querier, name, afterName, afterKey string) ([]claimRow, error) {
	rs, err := db.Query(ctx, `SELECT id, name, key, stale_after::text, opened_at, alive_at, alive_at < clock_timestamp() - stale_after
FROM once.open_claims WHERE state = 'open' AND ($1 = '' OR name = $1) AND (name, key) > ($2, $3)
ORDER BY name, key LIMIT $4`, name, afterName, afterKey, pageSize+1)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, func(r pgx.CollectableRow) (claimRow, error) {
		var c claimRow
		return c, r.Scan(&c.ID, &c.Name, &c.Key, &c.Stale, &c.OpenedAt, &c.AliveAt, &c.PastStale)
	})
}

type latchRow struct {
	Name, Key          string
	FiredAt, RearmedAt *time.Time
	Firings            int64
}

// listLatches pages the latches by name and key (their primary key); set only, unless all.
func listLatches(ctx context.Context, db querier, name string, all bool, afterName, afterKey string) ([]latchRow, error) {
	rs, err := db.Query(ctx, `SELECT name, key, fired_at, rearmed_at, firings FROM once.latches
WHERE ($1 = '' OR name = $1) AND ($2 OR fired_at IS NOT NULL) AND (name, key) > ($3, $4)
ORDER BY name, key LIMIT $5`, name, all, afterName, afterKey, pageSize+1)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, func(r pgx.CollectableRow) (latchRow, error) {
		var l latchRow
		return l, r.Scan(&l.Name, &l.Key, &l.FiredAt, &l.RearmedAt, &l.Firings)
	})
}

type allowanceRow struct {
	Name, Key string
	Used      int64
	LastAt    time.Time
}

// listAllowances pages the keys holding units by name and key (the slots' primary key).
func listAllowances(ctx context.Context, db querier, name, afterName, afterKey string) ([]allowanceRow, error) {
	rs, err := db.Query(ctx, `SELECT name, key, count(*), max(reserved_at) FROM once.counter_slots
WHERE ($1 = '' OR name = $1) AND (name, key) > ($2, $3) GROUP BY name, key ORDER BY name, key LIMIT $4`,
		name, afterName, afterKey, pageSize+1)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, func(r pgx.CollectableRow) (allowanceRow, error) {
		var a allowanceRow
		return a, r.Scan(&a.Name, &a.Key, &a.Used, &a.LastAt)
	})
}

type leaseRow struct {
	Name, Key, Holder, ReleasedBy string
	Fence                         int64
	AcquiredAt, ExpiresAt         time.Time
	ReleasedAt                    *time.Time
	Expired                       bool
}

// listLeases pages the leases by name and key (their primary key); held only, unless all.
func listLeases(ctx context.Context, db querier, name string, all bool, afterName, afterKey string) ([]leaseRow, error) {
	rs, err := db.Query(ctx, `SELECT name, key, holder, coalesce(released_by, ''), fence, acquired_at, expires_at, released_at,
	expires_at <= clock_timestamp()
FROM once.leases WHERE ($1 = '' OR name = $1) AND ($2 OR released_at IS NULL) AND (name, key) > ($3, $4)
ORDER BY name, key LIMIT $5`, name, all, afterName, afterKey, pageSize+1)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, func(r pgx.CollectableRow) (leaseRow, error) {
		var l leaseRow
		err := r.Scan(&l.Name, &l.Key, &l.Holder, &l.ReleasedBy, &l.Fence, &l.AcquiredAt, &l.ExpiresAt, &l.ReleasedAt, &l.Expired)
		l.Holder = holderTag(l.Holder)
		return l, err
	})
}

// holderTag names a lease's holder without showing its token: the token is the holder's
// proof (Lease.Restore takes it), so the page shows a digest that tells holders apart.
func holderTag(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:4])
}

type followUpRow struct {
	ID                                 int64
	OperationID, Operation, Scope, Key string
	Action, State, LastError           string
	Attempts                           int64
	Payload                            []byte
	CreatedAt, DueAt                   time.Time
}

// listFollowUps pages the follow-ups of a state by id.
func listFollowUps(ctx context.Context, db querier, state string, after int64) ([]followUpRow, error) {
	rs, err := db.Query(ctx, `SELECT id, operation_id::text, operation, scope, key, action, state, coalesce(last_error, ''), attempts,
	payload, created_at, due_at
FROM once.followups WHERE state = $1 AND id > $2 ORDER BY id LIMIT $3`, state, after, pageSize+1)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, func(r pgx.CollectableRow) (followUpRow, error) {
		var f followUpRow
		return f, r.Scan(&f.ID, &f.OperationID, &f.Operation, &f.Scope, &f.Key, &f.Action, &f.State, &f.LastError,
			&f.Attempts, &f.Payload, &f.CreatedAt, &f.DueAt)
	})
}

// shownResult is how a recorded result appears on a page, by the form it is kept in
// (result_form; see once.Record and once.Sealer). Every result passes through it. A sealed
// result is shown by its size only, never its stored bytes: they are what the guard chose
// to keep from readers of the database, and a redacted one cannot be told from an encrypted
// one. A digest is shown by its first 12 hex digits, enough to tell two results apart.
func shownResult(b []byte, form string) string {
	switch form {
	case "none":
		return "not recorded"
	case "sealed":
		var s string
		if json.Unmarshal(b, &s) != nil {
			return "sealed (unreadable)"
		}
		sealed, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "sealed (unreadable)"
		}
		return fmt.Sprintf("sealed (%d bytes)", len(sealed))
	case "digest":
		var s string
		if json.Unmarshal(b, &s) != nil || len(s) < 12 {
			return "digest (unreadable)"
		}
		return "digest " + s[:12]
	case "":
	default:
		return "kept as " + form
	}
	if b == nil {
		return ""
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return "(not JSON)"
	}
	return string(b)
}
