package once_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// A front door stores a client's reference scoped to the authenticated account as a
// generated forever wrapper passes its scope= and key= expressions, each encoded by once.Key
// (oncehttp does; once.Forever's doc says so). So the two meet on one row, for accounts
// whose encoding differs from the raw text ('/', '%') too, the ledger holds one scope for the
// account, and onceops.Lookup finds the operation by the encoded pair. The negative control
// passes the raw strings, as a hand call that skipped the encoding would: another operation.
func TestForever_AScopedReferenceMeetsAGeneratedWrapperOnOneRow(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	runs := 0
	charge := func(ctx context.Context) (string, error) {
		runs++
		a, _ := once.AttemptFrom(ctx)
		return "ch_" + strconv.Itoa(runs), a.Record(once.LedgerEntry{Kind: "cost", Unit: "usd_cents", Quantity: 500})
	}
	g := once.Forever{Name: "billing.Charge", Retain: 24 * time.Hour}
	for _, account := range []string{"acct-1", "team/7", "50%off"} {
		frontDoor := once.Ref{Scope: once.MustKey(account), Key: once.MustKey("order/9")}
		first, out, err := once.ForeverValue(ctx, pool, g, frontDoor, charge)
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
		v, out2, err := once.ForeverValue(ctx, pool, g, once.Ref{Scope: scope, Key: key}, charge)
		if err != nil || out2.Status != once.Duplicate || out2.Holder != out.Claim || v != first {
			t.Fatalf("%s: generated-style call %q %+v %v, want operation %s's %q", account, v, out2, err, out.Claim, first)
		}
		var ledgerScope string
		pool.QueryRow(ctx, `SELECT scope FROM once.ledger WHERE operation_id = $1`, out.Claim).Scan(&ledgerScope)
		if ledgerScope != scope {
			t.Fatalf("%s: ledger scope %q, want %q", account, ledgerScope, scope)
		}
		if rec, err := onceops.Lookup(ctx, pool, g.Name, scope, key); err != nil || rec.ID != out.Claim {
			t.Fatalf("%s: Lookup %+v %v", account, rec, err)
		}
	}
	if runs != 3 {
		t.Fatalf("%d charges for 3 accounts, want 3", runs)
	}
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Scope: "team/7", Key: "order/9"}, charge); err != nil || out.Status != once.Ran {
		t.Fatalf("negative control, raw strings: %+v %v, want another operation", out, err)
	}
}

// A key within its limit as written whose encoding is over MaxKeyLen ('/' and '%' take three
// bytes) is refused up front, and nothing is written.
func TestForever_AKeyTooLongOnceEncodedIsRefused(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	g := once.Forever{Name: "reports.generate"}
	ref := once.Ref{Scope: once.MustKey("acct-a"), Key: once.MustKey(strings.Repeat("/", 200))}
	_, err := g.Do(ctx, pool, ref, func(context.Context) error { return nil })
	if !errors.Is(err, once.ErrInvalid) {
		t.Fatalf("%v, want ErrInvalid", err)
	}
	if n := operationTables(t, pool); n != 0 {
		t.Fatalf("%d rows written, want none", n)
	}
}
