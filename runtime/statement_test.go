package once_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

func counterUsed(t *testing.T, db once.DB, name, key string) int64 {
	t.Helper()
	var used int64
	if err := db.QueryRow(context.Background(), "SELECT count(*) FROM once.counter_slots WHERE name = $1 AND key = $2", name, key).Scan(&used); err != nil {
		t.Fatal(err)
	}
	return used
}

func TestStatement_ConcurrentReservationsNeverPassTheCap(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	for _, c := range []struct {
		key    string
		cap, n int64
	}{
		{"org/1", 10, 1}, // 10 of 64 callers served
		{"org/2", 10, 3}, // 3 reservations of 3 fit in 10; a fourth would make 12
		{"org/3", 2, 1},  // an allowance of two a month
	} {
		g := once.Statement{Name: "ideas.Generate", Cap: c.cap}
		var refused atomic.Int64
		storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
			_, out, err := stmtValue(ctx, g, conn, c.key, c.n, func(ctx context.Context) (int, error) {
				return caller, effect(ctx, conn, "statement", c.key, caller)
			})
			if out.Status == once.Refused {
				refused.Add(1)
				if out.Count+c.n <= c.cap {
					t.Errorf("%s: refused at count %d although %d more fit under cap %d", c.key, out.Count, c.n, c.cap)
				}
			}
			return err
		})
		served := c.cap / c.n
		if n := effects(t, pool, "statement", c.key); int64(n) != served {
			t.Errorf("%s: %d effects under cap %d with n=%d, want exactly %d", c.key, n, c.cap, c.n, served)
		}
		if used := counterUsed(t, pool, g.Name, c.key); used != served*c.n {
			t.Errorf("%s: counter says %d used, want %d", c.key, used, served*c.n)
		}
		if got := refused.Load(); got != stormSize-served {
			t.Errorf("%s: %d refused, want %d", c.key, got, stormSize-served)
		}
	}
}

// The negative control: read the count, decide, then add (no conditional write). The barrier
// holds every caller between the read and the write, so all of them see room and all are
// served.
func TestStatement_NegativeControl_ReadThenAddPassesTheCap(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	const capacity = 10
	if _, err := pool.Exec(context.Background(), "INSERT INTO counters (name, key, used, cap) VALUES ('ideas.Generate', 'org/1', 0, $1)", capacity); err != nil {
		t.Fatal(err)
	}
	b := newBarrier(stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		var used int64
		if err := conn.QueryRow(ctx, "SELECT used FROM counters WHERE name = 'ideas.Generate' AND key = 'org/1'").Scan(&used); err != nil {
			return err
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
		if used+1 > capacity {
			return nil
		}
		if _, err := conn.Exec(ctx, "UPDATE counters SET used = used + 1 WHERE name = 'ideas.Generate' AND key = 'org/1'"); err != nil {
			return err
		}
		return effect(ctx, conn, "statement", "org/1", caller)
	})
	if n := effects(t, pool, "statement", "org/1"); n != stormSize {
		t.Fatalf("%d effects past a cap of %d without the guard, want all %d (the race this test must be able to see)", n, capacity, stormSize)
	}
}

// The conflict branch's WHERE guards only an existing counter; the very first reservation
// must be checked against the cap too.
func TestStatement_FirstReservationOverTheCapIsRefused(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Statement{Name: "export.Rows", Cap: 3}
	used, ok, err := g.Reserve(ctx, pool, "file/1", 5)
	if err != nil || ok || used != 0 {
		t.Fatalf("Reserve(5) under cap 3 = %d, %v, %v; want refused at 0", used, ok, err)
	}
	if n := onceRows(t, pool); n != 0 {
		t.Fatalf("a refused first reservation wrote %d rows", n)
	}
	if used, ok, err := g.Reserve(ctx, pool, "file/1", 3); err != nil || !ok || used != 3 {
		t.Fatalf("Reserve(3) under cap 3 = %d, %v, %v; want 3, reserved", used, ok, err)
	}
	if used, ok, err := g.Reserve(ctx, pool, "file/1", 1); err != nil || ok || used != 3 {
		t.Fatalf("Reserve(1) at the cap = %d, %v, %v; want refused at 3", used, ok, err)
	}
	zero := once.Statement{Name: "export.Disabled", Cap: 0}
	if _, ok, err := zero.Reserve(ctx, pool, "file/1", 1); err != nil || ok {
		t.Fatalf("cap 0 reserved: %v, %v", ok, err)
	}
}

// An allowance counts only work that was delivered: a failed run gives its units back.
func TestStatement_FailedWorkIsRefunded(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Statement{Name: "ideas.Generate", Cap: 2}
	boom := errors.New("model unavailable")
	for range 3 {
		_, out, err := stmtValue(ctx, g, pool, "org/1", 1, func(context.Context) (int, error) { return 0, boom })
		if !errors.Is(err, boom) || out.Status != once.Ran {
			t.Fatalf("got %v, %v; want the function's error", out.Status, err)
		}
	}
	if used := counterUsed(t, pool, g.Name, "org/1"); used != 0 {
		t.Fatalf("%d units still used after three failed runs, want 0", used)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on to the caller")
			}
		}()
		stmtValue(ctx, g, pool, "org/1", 1, func(context.Context) (int, error) { panic("kaboom") })
	}()
	if used := counterUsed(t, pool, g.Name, "org/1"); used != 0 {
		t.Fatalf("%d units still used after a panicking run, want 0", used)
	}
	for i := range 2 {
		if _, out, err := stmtValue(ctx, g, pool, "org/1", 1, func(context.Context) (int, error) { return 1, nil }); err != nil || out.Status != once.Ran || out.Count != int64(i+1) {
			t.Fatalf("run %d: %+v, %v; want ran with count %d", i+1, out, err, i+1)
		}
	}
	_, out, err := stmtValue(ctx, g, pool, "org/1", 1, func(context.Context) (int, error) { t.Error("ran past the cap"); return 0, nil })
	if err != nil || out.Status != once.Refused || out.Count != 2 {
		t.Fatalf("third delivered run: %+v, %v; want refused at count 2", out, err)
	}
}

func TestStatement_RefundBeyondWhatWasReservedChangesNothing(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Statement{Name: "n", Cap: 10}
	if _, _, err := g.Reserve(ctx, pool, "k", 2); err != nil {
		t.Fatal(err)
	}
	if err := g.Refund(ctx, pool, "k", 3); !errors.Is(err, once.ErrInvalid) {
		t.Fatalf("refund of 3 from 2: %v, want ErrInvalid", err)
	}
	if err := g.Refund(ctx, pool, "never", 1); !errors.Is(err, once.ErrInvalid) {
		t.Fatalf("refund of a key never reserved: %v, want ErrInvalid", err)
	}
	if used := counterUsed(t, pool, g.Name, "k"); used != 2 {
		t.Fatalf("used is %d after refused refunds, want 2", used)
	}
}

// Refunds racing with reservations and refusals: the cap bounds the units held at every
// moment, not only at the end. Each caller keeps asking until the cap is filled by work that
// succeeded; every caller's first run fails and is refunded (so refunds happen however the
// callers' starts fall), and refusals (read without a lock) keep meeting counters that a
// refund is about to lower. If a refusal or a refund could let a reservation past the cap,
// more than cap functions would run at once, or the counter would end above the successes.
func TestStatement_RefundsRacingWithRefusalsKeepTheCap(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	const capacity = 5
	g := once.Statement{Name: "ideas.Generate", Cap: capacity}
	var running, most, succeeded, refused, refunded atomic.Int64
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		failFirst := true
		for succeeded.Load() < capacity {
			_, out, err := stmtValue(ctx, g, conn, "org/1", 1, func(ctx context.Context) (int, error) {
				now := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				time.Sleep(time.Millisecond) // hold the units long enough for others to meet them
				if failFirst {
					failFirst = false
					refunded.Add(1)
					return 0, errBoom
				}
				succeeded.Add(1)
				return caller, effect(ctx, conn, "statement", "org/1", caller)
			})
			switch {
			case errors.Is(err, errBoom):
			case err != nil:
				return err
			case out.Status == once.Ran:
				return nil
			case out.Status == once.Refused:
				refused.Add(1)
				time.Sleep(100 * time.Microsecond)
			}
		}
		return nil
	})
	if m := most.Load(); m > capacity {
		t.Errorf("%d functions ran at once under a cap of %d", m, capacity)
	}
	if n := effects(t, pool, "statement", "org/1"); n != capacity {
		t.Errorf("%d effects, want exactly the cap, %d", n, capacity)
	}
	if used := counterUsed(t, pool, g.Name, "org/1"); used != capacity {
		t.Errorf("counter says %d used after %d refunds, want %d", used, refunded.Load(), capacity)
	}
	if refused.Load() == 0 || refunded.Load() == 0 {
		t.Errorf("%d refusals and %d refunds: the storm did not race them", refused.Load(), refunded.Load())
	}
	// Whatever marks the refusals made and the refunds cleared, the key's mark tells the
	// truth: a unit given back is reserved again.
	ctx := context.Background()
	if err := g.Refund(ctx, pool, "org/1", 1); err != nil {
		t.Fatal(err)
	}
	if used, ok, err := g.Reserve(ctx, pool, "org/1", 1); err != nil || !ok || used != capacity {
		t.Errorf("after the storm and a refund: Reserve = %d, %v, %v; want the unit reserved again", used, ok, err)
	}
}

// The negative control for the storm above: the same callers with the read alone deciding
// (read the count, add if there was room, refund when done). The barriers hold every caller
// between its read and its write until all have read, then every writer with its units until
// all have written: all read room, so all hold units at once, far past the cap.
func TestStatement_NegativeControl_ReadAloneDecidingPassesTheCapUnderRefunds(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	const capacity = 5
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "INSERT INTO counters (name, key, used, cap) VALUES ('ideas.Generate', 'org/1', 0, $1)", capacity); err != nil {
		t.Fatal(err)
	}
	var held atomic.Int64
	read, wrote := newBarrier(stormSize), newBarrier(stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		var used int64
		if err := conn.QueryRow(ctx, "SELECT used FROM counters WHERE name = 'ideas.Generate' AND key = 'org/1'").Scan(&used); err != nil {
			return err
		}
		if err := read.wait(ctx); err != nil {
			return err
		}
		room := used+1 <= capacity
		if room {
			if _, err := conn.Exec(ctx, "UPDATE counters SET used = used + 1 WHERE name = 'ideas.Generate' AND key = 'org/1'"); err != nil {
				return err
			}
			held.Add(1)
		}
		if err := wrote.wait(ctx); err != nil {
			return err
		}
		if !room {
			return nil
		}
		_, err := conn.Exec(ctx, "UPDATE counters SET used = used - 1 WHERE name = 'ideas.Generate' AND key = 'org/1'")
		return err
	})
	if n := held.Load(); n <= capacity {
		t.Fatalf("%d held units at once with the read alone deciding, want more than the cap of %d (the race this test must be able to see)", n, capacity)
	}
}

// A refusal of a full counter reads it without a lock: it answers while another transaction
// holds the key's slots locked. The guard's earlier form, the conditional upsert of one
// counter row, waits for that row's lock (ON CONFLICT .. DO UPDATE locks the row even when
// its WHERE refuses): that is the negative control.
func TestStatement_RefusalTakesNoLock(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Statement{Name: "ideas.Generate", Cap: 2}
	if _, ok, err := g.Reserve(ctx, pool, "org/1", 2); err != nil || !ok {
		t.Fatalf("filling the counter: %v, %v", ok, err)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO counters (name, key, used, cap) VALUES ('ideas.Generate', 'org/1', 2, 2)"); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, table := range []string{"once.counter_slots", "counters"} {
		if _, err := tx.Exec(ctx, "SELECT * FROM "+table+" WHERE name = 'ideas.Generate' AND key = 'org/1' FOR UPDATE"); err != nil {
			t.Fatal(err)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	used, ok, err := g.Reserve(lctx, pool, "org/1", 1)
	if err != nil || ok || used != 2 {
		t.Fatalf("Reserve on a full counter locked by another transaction = %d, %v, %v; want refused at 2 without waiting", used, ok, err)
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET lock_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "RESET lock_timeout")
	_, err = conn.Exec(ctx, `INSERT INTO counters AS c (name, key, used, cap) VALUES ('ideas.Generate', 'org/1', 1, 2)
ON CONFLICT (name, key) DO UPDATE SET used = c.used + EXCLUDED.used WHERE c.used + EXCLUDED.used <= EXCLUDED.cap`)
	if pgErrCode(err) != "55P03" {
		t.Fatalf("the conditional upsert alone on the locked full counter: %v; want it to wait for the lock (55P03 after lock_timeout)", err)
	}
}

// Reservations of one key do not queue behind each other's commits: with a reservation
// uncommitted in another transaction, a reservation of the same key is made at once, as it
// inserts a slot of its own. (It waits only if it picks the very slot the other holds: one
// chance in a million here.) The earlier form, a conditional upsert of one counter row,
// waits for the uncommitted update: that is the negative control.
func TestStatement_ReservationsDoNotQueue(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Statement{Name: "ideas.Generate", Cap: 1_000_000}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, ok, err := g.Reserve(ctx, tx, "org/1", 1); err != nil || !ok {
		t.Fatalf("the reservation in the open transaction: %v, %v", ok, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO counters (name, key, used, cap) VALUES ('ideas.Generate', 'org/1', 1, 1000000)"); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET lock_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "RESET lock_timeout")
	if used, ok, err := g.Reserve(ctx, conn, "org/1", 1); err != nil || !ok || used != 1 {
		t.Fatalf("a reservation beside an uncommitted one = %d, %v, %v; want made at once, 1 used in its snapshot", used, ok, err)
	}
	_, err = conn.Exec(ctx, `INSERT INTO counters AS c (name, key, used, cap) VALUES ('ideas.Generate', 'org/1', 1, 1000000)
ON CONFLICT (name, key) DO UPDATE SET used = c.used + EXCLUDED.used WHERE c.used + EXCLUDED.used <= EXCLUDED.cap`)
	if pgErrCode(err) != "55P03" {
		t.Fatalf("the conditional upsert beside an uncommitted one: %v; want it to wait for the other's commit (55P03 after lock_timeout)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if used := counterUsed(t, pool, g.Name, "org/1"); used != 2 {
		t.Fatalf("%d units used after both committed, want 2", used)
	}
}

// Concurrent refunds give back exactly the units held: of 20 refunds of one unit on a key
// holding 5, five succeed and the rest are refused, and nothing is given back twice.
func TestStatement_ConcurrentRefundsGiveBackEachUnitOnce(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	ctx := context.Background()
	g := once.Statement{Name: "ideas.Generate", Cap: 10}
	if _, ok, err := g.Reserve(ctx, pool, "org/1", 5); err != nil || !ok {
		t.Fatalf("reserving 5: %v, %v", ok, err)
	}
	var refunded, refused atomic.Int64
	storm(t, pool, 20, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		err := g.Refund(ctx, conn, "org/1", 1)
		switch {
		case err == nil:
			refunded.Add(1)
		case errors.Is(err, once.ErrInvalid):
			refused.Add(1)
		default:
			return err
		}
		return nil
	})
	if refunded.Load() != 5 || refused.Load() != 15 {
		t.Fatalf("%d refunds made and %d refused, want 5 and 15", refunded.Load(), refused.Load())
	}
	if used := counterUsed(t, pool, g.Name, "org/1"); used != 0 {
		t.Fatalf("%d units used after refunding all, want 0", used)
	}
}

// A cap far beyond what can be enumerated costs a reservation no more than a small one: the
// walk over slot numbers is evaluated only until it finds free ones.
func TestStatement_HugeCapReservesWithoutEnumeratingIt(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g := once.Statement{Name: "bytes.Egress", Cap: math.MaxInt64}
	for i := range 3 {
		used, ok, err := g.Reserve(ctx, pool, "acct/1", 1000)
		if err != nil || !ok || used != int64(i+1)*1000 {
			t.Fatalf("reservation %d of 1000 units under the largest cap: %d, %v, %v", i+1, used, ok, err)
		}
	}
	var below int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM once.counter_slots WHERE name = 'bytes.Egress' AND slot >= 0").Scan(&below); err != nil || below != 3000 {
		t.Fatalf("%d slots, %v; want 3000", below, err)
	}
}

// The negative control for the slot rows: the same rows with the count alone deciding (each
// unit numbered by its caller, past the cap, rather than below it) let every caller through, as the barrier holds all of them between the count and the insert. The
// numbering below the cap, not the count read, is what keeps the cap.
func TestStatement_NegativeControl_SlotsNumberedPastTheCapPassIt(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	const capacity = 10
	b := newBarrier(stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		var used int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM once.counter_slots WHERE name = 'ideas.Generate' AND key = 'org/1'").Scan(&used); err != nil {
			return err
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
		if used+1 > capacity {
			return nil
		}
		_, err := conn.Exec(ctx, `INSERT INTO once.counter_slots (name, key, slot, token) VALUES ('ideas.Generate', 'org/1', $1, 'bare')
ON CONFLICT (name, key, slot) DO NOTHING`, int64(caller)+capacity*1000)
		return err
	})
	if used := counterUsed(t, pool, "ideas.Generate", "org/1"); used <= capacity {
		t.Fatalf("%d units held with the count alone deciding, want more than the cap of %d (the race this test must be able to see)", used, capacity)
	}
}
