package onceui

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
}

// dayCount is a bar of the overview's chart.
type dayCount struct {
	Day   time.Time
	Count int64
}

func overview(ctx context.Context, db querier, since time.Duration) ([]guardRow, []dayCount, error) {
	var rows []guardRow
	add := func(sql string, scan func(pgx.Rows, *guardRow) error, args ...any) error {
		rs, err := db.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var g guardRow
			if err := scan(rs, &g); err != nil {
				return err
			}
			rows = append(rows, g)
		}
		return rs.Err()
	}
	// One pass over the window's operations (the BRIN index on claimed_at keeps it to the
	// window's pages), by guard and day: the guards' rows and the chart's bars at once.
	byDay := map[time.Time]int64{}
	err := func() error {
		rs, err := db.Query(ctx, `SELECT name, date_trunc('day', claimed_at, 'UTC'), count(*), count(*) FILTER (WHERE state = 'done'),
	count(*) FILTER (WHERE state = 'failed'), count(*) FILTER (WHERE state = 'released'), count(*) FILTER (WHERE state = 'open'),
	count(*) FILTER (WHERE state = 'uncertain'), coalesce(sum(attempts - 1), 0)
FROM once.operations WHERE claimed_at >= statement_timestamp() - $1::interval GROUP BY 1, 2 ORDER BY 1, 2`, since)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var g guardRow
			var day time.Time
			if err := rs.Scan(&g.Name, &day, &g.Calls, &g.Done, &g.Failed, &g.Released, &g.InFlight, &g.Uncertain, &g.Retried); err != nil {
				return err
			}
			byDay[day] += g.Done
			if n := len(rows); n > 0 && rows[n-1].Name == g.Name {
				r := &rows[n-1]
				r.Calls += g.Calls
				r.Done += g.Done
				r.Failed += g.Failed
				r.Released += g.Released
				r.InFlight += g.InFlight
				r.Uncertain += g.Uncertain
				r.Retried += g.Retried
				continue
			}
			g.Kind = "forever"
			rows = append(rows, g)
		}
		return rs.Err()
	}()
	if err == nil {
		err = add(`SELECT name, count(*), count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state IN ('failed')),
	count(*) FILTER (WHERE state = 'open'), count(*) FILTER (WHERE state = 'stale'),
	count(*) FILTER (WHERE state = 'open' AND alive_at < clock_timestamp() - stale_after)
FROM once.open_claims WHERE opened_at >= clock_timestamp() - $1::interval OR state = 'open' GROUP BY name ORDER BY name`,
			func(r pgx.Rows, g *guardRow) error {
				g.Kind = "open"
				var closedStale int64
				err := r.Scan(&g.Name, &g.Calls, &g.Done, &g.Failed, &g.InFlight, &closedStale, &g.Stale)
				g.Stale += closedStale
				return err
			}, since)
	}
	if err == nil {
		err = add(`SELECT name, coalesce(sum(firings), 0), count(*) FILTER (WHERE fired_at IS NOT NULL) FROM once.latches GROUP BY name ORDER BY name`,
			func(r pgx.Rows, g *guardRow) error { g.Kind = "episode"; return r.Scan(&g.Name, &g.Calls, &g.Set) })
	}
	if err == nil {
		err = add(`SELECT name, count(*) FROM once.counter_slots GROUP BY name ORDER BY name`,
			func(r pgx.Rows, g *guardRow) error { g.Kind = "statement"; return r.Scan(&g.Name, &g.Used) })
	}
	if err == nil {
		err = add(`SELECT name, count(*) FILTER (WHERE released_at IS NULL AND expires_at > clock_timestamp()) FROM once.leases GROUP BY name ORDER BY name`,
			func(r pgx.Rows, g *guardRow) error { g.Kind = "lease"; return r.Scan(&g.Name, &g.Held) })
	}
	if err != nil {
		return nil, nil, err
	}
	days := make([]dayCount, 0, len(byDay))
	for d, n := range byDay {
		days = append(days, dayCount{Day: d, Count: n})
	}
	return rows, days, nil
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
