package once_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

func ledgerRows(t testing.TB, db once.DB, scope string) (rows int, quantity int64) {
	t.Helper()
	err := db.QueryRow(context.Background(), `SELECT count(*), coalesce(sum(quantity), 0) FROM once.ledger WHERE scope = $1`, scope).
		Scan(&rows, &quantity)
	if err != nil {
		t.Fatal(err)
	}
	return rows, quantity
}

func TestLedger_OneEntryPerOperationWhateverTheCallers(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	g := once.Forever{Name: "reports.Generate", Retain: 24 * time.Hour}
	ref := once.Ref{Scope: once.MustKey("acct-1"), Key: once.MustKey("ref-1")}
	var ran atomic.Int64
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		_, _, err := once.ForeverValue(ctx, conn, g, ref, func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			ran.Add(1)
			time.Sleep(50 * time.Millisecond) // let the others arrive while it runs
			return 1, a.Record(
				once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1},
				once.LedgerEntry{Kind: "cost", Unit: "usd_micros", Quantity: 1200, Detail: map[string]string{"model": "m-1"}},
			)
		})
		return err
	})
	for range 3 { // retries after completion
		if _, out, err := once.ForeverValue(context.Background(), pool, g, ref, func(context.Context) (int, error) { return 0, nil }); err != nil || out.Status != once.Duplicate {
			t.Fatalf("retry: %+v, %v", out, err)
		}
	}
	if n, q := ledgerRows(t, pool, "acct-1"); n != 2 || q != 1201 || ran.Load() != 1 {
		t.Fatalf("%d ledger rows (total %d) after %d runs, want 2 (1201) after 1", n, q, ran.Load())
	}
	rec, err := onceops.Lookup(context.Background(), pool, g.Name, once.MustKey("acct-1"), once.MustKey("ref-1"))
	if err != nil {
		t.Fatal(err)
	}
	// A recovery job that records the usage again adds nothing.
	added, err := onceops.RecordLedger(context.Background(), pool, rec, once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1})
	if err != nil || added != 0 {
		t.Fatalf("RecordLedger of an entry already there: %d, %v; want 0 added", added, err)
	}
	gone := rec
	gone.ID = once.MustKey("00000000-0000-4000-8000-000000000000")
	if _, err := onceops.RecordLedger(context.Background(), pool, gone, once.LedgerEntry{Kind: "usage", Unit: "report"}); !errors.Is(err, onceops.ErrNoOperation) {
		t.Fatalf("RecordLedger for an unknown operation: %v, want ErrNoOperation", err)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO once.ledger (operation_id, operation, scope, key, kind, unit, quantity)
VALUES ($1, 'reports.Generate', 'acct-1', 'ref-1', 'usage', 'report', 1)`, rec.ID); err == nil {
		t.Fatal("a second usage row for the operation was accepted: the unique constraint is missing")
	}
}

// Two workers finish the same operation: the first went silent past Stale and a second took
// its claim over. Only the owner's settle writes the ledger, so usage is counted once. The
// negative control has each worker write its usage itself, as code without the settle
// would: two deductions.
func TestLedger_ReplacedWorkerCannotCountTwice(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		direct bool
		want   int
	}{{"ledger written by the settle", false, 1}, {"negative control: each worker writes its usage", true, 2}} {
		scope := "acct-" + c.name
		g := once.Forever{Name: "reports.Generate", Stale: 100 * time.Millisecond, RepeatSafe: true, NoHeartbeat: true}
		record := func(ctx context.Context, a *once.Attempt) error {
			if c.direct {
				_, err := pool.Exec(ctx, `INSERT INTO effects (guard, key, caller) VALUES ('usage', $1, $2)`, scope, a.Number())
				return err
			}
			return a.Record(once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1})
		}
		ref := once.Ref{Scope: scope, Key: "ref-1"}
		_, _, slowErr := once.ForeverValue(ctx, pool, g, ref, func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			time.Sleep(250 * time.Millisecond) // silent past Stale
			if _, out, err := once.ForeverValue(ctx, pool, g, ref, func(ctx context.Context) (int, error) {
				b, _ := once.AttemptFrom(ctx)
				return 2, record(ctx, b)
			}); err != nil || out.Status != once.Ran {
				t.Errorf("%s: takeover %+v, %v", c.name, out, err)
			}
			return 1, record(ctx, a)
		})
		if !c.direct && !errors.Is(slowErr, once.ErrNotOwner) {
			t.Errorf("%s: the replaced worker's settle: %v, want ErrNotOwner", c.name, slowErr)
		}
		n, _ := ledgerRows(t, pool, scope)
		n += effects(t, pool, "usage", scope)
		if n != c.want {
			t.Errorf("%s: %d usage rows, want %d", c.name, n, c.want)
		}
	}
}

func TestLedger_NotWrittenForARetryableFailure(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Generate", Retain: 24 * time.Hour}
	ref := once.Ref{Scope: once.MustKey("acct-2"), Key: once.MustKey("ref-1")}
	usage := once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1}
	once.ForeverValue(ctx, pool, g, ref, func(ctx context.Context) (int, error) {
		a, _ := once.AttemptFrom(ctx)
		if err := a.Record(usage); err != nil {
			t.Fatal(err)
		}
		if err := a.Record(usage); !errors.Is(err, once.ErrInvalid) {
			t.Errorf("the same entry twice: %v, want ErrInvalid", err)
		}
		return 0, errors.New("model timed out")
	})
	if n, _ := ledgerRows(t, pool, "acct-2"); n != 0 {
		t.Fatalf("%d ledger rows for an attempt that delivered nothing, want 0", n)
	}
	once.ForeverValue(ctx, pool, g, ref, func(ctx context.Context) (int, error) {
		a, _ := once.AttemptFrom(ctx)
		return 1, a.Record(usage)
	})
	if n, _ := ledgerRows(t, pool, "acct-2"); n != 1 {
		t.Fatalf("%d ledger rows after the delivered retry, want 1", n)
	}
}
