package once_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
)

// An Operation stores its account and reference as a generated forever wrapper passes its
// scope= and key= expressions: each encoded by once.Key. So the two meet on one row,
// for accounts whose encoding differs from the raw text ('/', '%') too, and the ledger holds
// one scope for the account. The negative control passes the raw strings to DoRef, as a hand
// call that skipped the encoding would: another operation.
func TestOperation_StoredAsAGeneratedGuardScopesIt(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	runs := 0
	charge := func(ctx context.Context) (string, error) {
		runs++
		a, _ := once.AttemptFrom(ctx)
		return "ch_" + strconv.Itoa(runs), a.Record(once.LedgerEntry{Kind: "cost", Unit: "usd_cents", Quantity: 500})
	}
	for _, account := range []string{"acct-1", "team/7", "50%off"} {
		op := once.Operation[string]{Name: "billing.Charge"}
		ref := once.OperationRef{Account: account, Reference: "order/9"}
		first, out, err := op.Do(ctx, pool, ref, func(ctx context.Context, _ *once.Attempt) (string, error) { return charge(ctx) })
		if err != nil || out.Status != once.Ran {
			t.Fatalf("%s: %+v %v", account, out, err)
		}
		// What oncegen writes for //once:forever name=billing.Charge scope=acct key=orderRef.
		scope, err := once.Key(account)
		if err != nil {
			t.Fatal(err)
		}
		key, err := once.Key("order/9")
		if err != nil {
			t.Fatal(err)
		}
		generated := once.Forever[string]{Name: "billing.Charge", Retain: once.DefaultOperationRetain}
		v, out2, err := generated.DoRef(ctx, pool, once.Ref{Scope: scope, Key: key}, charge)
		if err != nil || out2.Status != once.Duplicate || out2.ID != out.ID || v != first {
			t.Fatalf("%s: generated-style call %q %+v %v, want operation %d's %q", account, v, out2, err, out.ID, first)
		}
		var ledgerScope string
		pool.QueryRow(ctx, `SELECT scope FROM once.ledger WHERE operation_id = $1`, out.ID).Scan(&ledgerScope)
		if ledgerScope != scope {
			t.Fatalf("%s: ledger scope %q, want %q", account, ledgerScope, scope)
		}
		if rec, err := op.Lookup(ctx, pool, account, "order/9"); err != nil || rec.ID != out.ID {
			t.Fatalf("%s: Lookup %+v %v", account, rec, err)
		}
	}
	if runs != 3 {
		t.Fatalf("%d charges for 3 accounts, want 3", runs)
	}
	raw := once.Forever[string]{Name: "billing.Charge"}
	if _, out, err := raw.DoRef(ctx, pool, once.Ref{Scope: "team/7", Key: "order/9"}, charge); err != nil || out.Status != once.Ran {
		t.Fatalf("negative control, raw strings: %+v %v, want another operation", out, err)
	}
}

// A reference within MaxReferenceLen whose encoding is over MaxKeyLen is refused up front,
// and nothing is written.
func TestOperation_ReferenceTooLongOnceEncodedIsRefused(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	op := once.Operation[int]{Name: "reports.generate"}
	ref := once.OperationRef{Account: "acct-a", Reference: strings.Repeat("/", 200)}
	_, _, err := op.Do(ctx, pool, ref, func(context.Context, *once.Attempt) (int, error) { return 1, nil })
	if !errors.Is(err, once.ErrInvalid) {
		t.Fatalf("%v, want ErrInvalid", err)
	}
	if n := operationTables(t, pool); n != 0 {
		t.Fatalf("%d rows written, want none", n)
	}
}

// An operator's resolution of an uncertain operation is kept as long as its guard keeps an
// outcome, from the resolution: then the key is forgotten like any other. A guard without
// Retain keeps it for ever.
func TestResolve_KeepsTheResolutionForTheGuardsRetention(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	lost := func(context.Context) (int, error) { return 0, once.Uncertain(errors.New("connection reset")) }
	for _, c := range []struct {
		name    string
		retain  time.Duration
		resolve func(id int64) error
		state   string
	}{
		{"done", time.Hour, func(id int64) error { return once.ResolveDone(ctx, pool, id, 7) }, "done"},
		{"failed", 2 * time.Hour, func(id int64) error { return once.ResolveFailed(ctx, pool, id, "declined") }, "failed"},
		{"retry", 3 * time.Hour, func(id int64) error { return once.ResolveRetry(ctx, pool, id) }, "released"},
		{"for ever", 0, func(id int64) error { return once.ResolveDone(ctx, pool, id, 7) }, "done"},
	} {
		g := once.Forever[int]{Name: "billing.Charge", Retain: c.retain}
		_, out, _ := g.Do(ctx, pool, c.name, lost)
		id := out.ID
		if err := c.resolve(id); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rec, err := once.LookupOperation(ctx, pool, g.Name, "", c.name)
		if err != nil || rec.State != c.state || rec.Retain != c.retain {
			t.Fatalf("%s: %+v %v, want %s, retain %v", c.name, rec, err, c.state, c.retain)
		}
		if kept := rec.ExpiresAt.Sub(rec.SettledAt); (c.retain == 0) != rec.ExpiresAt.IsZero() || (c.retain > 0 && kept != c.retain) {
			t.Fatalf("%s: settled %v, expires %v; want kept %v", c.name, rec.SettledAt, rec.ExpiresAt, c.retain)
		}
	}
	// Past its window, a resolved key runs as new work.
	if _, err := pool.Exec(ctx, `UPDATE once.operations SET expires_at = clock_timestamp() - interval '1 second' WHERE key = 'done'`); err != nil {
		t.Fatal(err)
	}
	g := once.Forever[int]{Name: "billing.Charge", Retain: time.Hour}
	if v, out, err := g.Do(ctx, pool, "done", func(context.Context) (int, error) { return 8, nil }); err != nil || out.Status != once.Ran || v != 8 {
		t.Fatalf("after the resolution expired: %d %+v %v, want a new run", v, out, err)
	}
}
