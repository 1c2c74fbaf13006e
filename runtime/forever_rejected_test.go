package once_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// order is the input of the tests' rejected calls: a quantity the function validates.
type order struct {
	Item string `json:"item"`
	Qty  int    `json:"qty"`
}

// placeOrder refuses a non-positive quantity before doing anything (Rejected, or the plain
// error the negative control returns), and otherwise places the order: one effect row and
// a ledger entry.
func placeOrder(pool once.DB, in order, reject func(error) error) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		a, _ := once.AttemptFrom(ctx)
		if in.Qty <= 0 {
			// Entries gathered before the refusal must not be written.
			a.Record(once.LedgerEntry{Kind: "usage", Unit: "order", Quantity: 1})
			return "", reject(errors.New("qty must be positive"))
		}
		if err := effect(ctx, pool, "orders", in.Item, in.Qty); err != nil {
			return "", err
		}
		return "placed", a.Record(once.LedgerEntry{Kind: "usage", Unit: "order", Quantity: 1})
	}
}

// A call rejected before doing anything leaves the key unused: the corrected input runs
// under the same key. The negative control returns a plain (retryable) error: the key is
// released and keeps the first input, so the corrected input is refused as a reused key.
func TestForever_RejectedInputLeavesTheKeyUnused(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "shop.Order"}
	for _, c := range []struct {
		name      string
		reject    func(error) error
		corrected error // what the corrected call gets
	}{
		{"Rejected", once.Rejected, nil},
		{"negative control: a retryable error", func(err error) error { return err }, once.ErrMismatch},
	} {
		key := "cart-" + c.name
		bad, good := order{Item: key, Qty: 0}, order{Item: key, Qty: 2}
		_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: key, Input: bad}, placeOrder(pool, bad, c.reject))
		if out.Status != once.Ran || err == nil || err.Error() != "qty must be positive" {
			t.Fatalf("%s: bad input: %+v %v, want the function's own error", c.name, out, err)
		}
		v, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: key, Input: good}, placeOrder(pool, good, c.reject))
		if !errors.Is(err, c.corrected) || (c.corrected == nil && (v != "placed" || out.Status != once.Ran)) {
			t.Fatalf("%s: corrected input: %q %+v %v, want error %v", c.name, v, out, err, c.corrected)
		}
		want := 1
		if c.corrected != nil {
			want = 0
		}
		var ledger int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM once.ledger l JOIN once.operations o ON o.id = l.operation_id WHERE o.key = $1`, key).Scan(&ledger); err != nil {
			t.Fatal(err)
		}
		if n := effects(t, pool, "orders", key); n != want || ledger != want {
			t.Fatalf("%s: %d orders and %d ledger entries, want %d", c.name, n, ledger, want)
		}
	}
}

// Rejected forgets a key only when nothing of the operation can exist beyond its row. After
// an earlier attempt that failed (it may have done part of the work), or a checkpoint, the
// claim is released instead and keeps its input.
func TestForever_RejectedAfterEarlierWorkOnlyReleases(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "shop.Order"}
	in := order{Item: "x", Qty: 1}
	rejected := func(context.Context) (string, error) { return "", once.Rejected(errors.New("refused")) }

	// An earlier attempt failed retryably; the next one rejects.
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "after-failure", Input: in}, func(context.Context) (string, error) {
		return "", errors.New("provider timed out")
	}); err == nil {
		t.Fatal("the failing attempt succeeded")
	}
	// A first attempt checkpoints a step, then rejects.
	checkpointed := func(ctx context.Context) (string, error) {
		a, _ := once.AttemptFrom(ctx)
		if _, err := once.Step(ctx, pool, a, "reserve", func(context.Context, pgx.Tx) (int, error) { return 1, nil }); err != nil {
			return "", err
		}
		return "", once.Rejected(errors.New("refused after a step"))
	}
	for key, fn := range map[string]func(context.Context) (string, error){"after-failure": rejected, "after-checkpoint": checkpointed} {
		_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: key, Input: in}, fn)
		if out.Status != once.Ran || err == nil {
			t.Fatalf("%s: %+v %v", key, out, err)
		}
		if r := operationState(t, pool, out.Claim); r.state != "released" {
			t.Fatalf("%s: operation %+v, want released", key, r)
		}
		other := order{Item: "x", Qty: 2}
		if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: key, Input: other}, rejected); !errors.Is(err, once.ErrMismatch) {
			t.Fatalf("%s: other input after a released rejection: %v, want ErrMismatch", key, err)
		}
	}
}

// Errors name the guard and the key the caller used: a mismatch says which operation the
// key was first used by, and a refusal of the call's arguments says what is wrong.
func TestErrors_NameTheGuardAndTheKey(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	_, first, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/1", Input: 1}, func(context.Context) (int, error) { return 1, nil })
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/1", Input: 2}, func(context.Context) (int, error) { return 1, nil })
	if !errors.Is(err, once.ErrMismatch) || err.Error() != `once: key reused with different input: forever guard billing.Charge: key "order/1" (operation `+first.Claim+`) was first used with another input` {
		t.Fatalf("forever mismatch: %v", err)
	}
	if _, err := g.Do(ctx, pool, once.Ref{Key: "order/2"}, nil); err == nil || err.Error() != "once: invalid argument: forever guard billing.Charge: nil function" {
		t.Fatalf("forever without a function: %v", err)
	}
	if _, err := g.Do(ctx, nil, once.Ref{Key: "order/2"}, func(context.Context) error { return nil }); err == nil || err.Error() != "once: invalid argument: nil DB" {
		t.Fatalf("forever without a DB: %v", err)
	}
	if _, err := g.Do(ctx, pool, once.Ref{Scope: "acct"}, func(context.Context) error { return nil }); err == nil || err.Error() != "once: invalid argument: guard billing.Charge: empty key" {
		t.Fatalf("forever without a key: %v", err)
	}
}
