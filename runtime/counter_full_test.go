package once_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

// fullMark is the cap a key is marked full at in once.counter_full, or -1 when it has no mark.
func fullMark(t *testing.T, db once.DB, name, key string) int64 {
	t.Helper()
	var c *int64
	err := db.QueryRow(context.Background(), "SELECT cap FROM once.counter_full WHERE name = $1 AND key = $2", name, key).Scan(&c)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	if c == nil {
		return -1
	}
	return *c
}

func reserve(t *testing.T, g once.Statement, db once.DB, key string, n, wantUsed int64, wantOK bool) {
	t.Helper()
	used, ok, err := g.Reserve(context.Background(), db, key, n)
	if err != nil || ok != wantOK || used != wantUsed {
		t.Fatalf("Reserve(%s, %d) under cap %d = %d, %v, %v; want %d, %v", key, n, g.Cap, used, ok, err, wantUsed, wantOK)
	}
}

// A refusal that counts every slot below the cap held marks the key full, and the refusals
// after it read the mark. Every way a slot goes (a refund, the give-back of failed work, a
// delete by hand) clears it, so a freed unit is reserved again; a cap raised or lowered
// reads the count again where the mark does not settle it.
func TestStatement_FullMarkIsMadeByARefusalAndClearedByEveryGiveBack(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	g := once.Statement{Name: "ideas.Generate", Cap: 3}
	reserve(t, g, pool, "org/1", 3, 3, true)
	if m := fullMark(t, pool, g.Name, "org/1"); m != -1 {
		t.Fatalf("marked full at %d by the reservation that filled it; a reservation cannot know it filled the key", m)
	}
	reserve(t, g, pool, "org/1", 1, 3, false)
	if m := fullMark(t, pool, g.Name, "org/1"); m != 3 {
		t.Fatalf("after a refusal of the full key: mark %d, want 3", m)
	}
	reserve(t, g, pool, "org/1", 1, 3, false) // read from the mark

	// A refund clears the mark; the freed unit is reserved again, and the next refusal marks.
	if err := g.Refund(ctx, pool, "org/1", 1); err != nil {
		t.Fatal(err)
	}
	if m := fullMark(t, pool, g.Name, "org/1"); m != -1 {
		t.Fatalf("after a refund: mark %d, want none", m)
	}
	reserve(t, g, pool, "org/1", 1, 3, true)
	reserve(t, g, pool, "org/1", 1, 3, false)

	// Failed work gives its units back by token, which clears the mark too.
	reserve(t, g, pool, "org/2", 2, 2, true)
	_, out, err := stmtValue(ctx, g, pool, "org/2", 1, func(context.Context) (int, error) { return 0, errBoom })
	if err == nil || out.Status != once.Ran {
		t.Fatalf("failed work: %+v, %v", out, err)
	}
	reserve(t, g, pool, "org/2", 2, 2, false) // 2 + 2 > 3: refused, but not every slot is held
	if m := fullMark(t, pool, g.Name, "org/2"); m != -1 {
		t.Fatalf("marked full at %d with a slot free", m)
	}
	reserve(t, g, pool, "org/2", 1, 3, true)
	reserve(t, g, pool, "org/2", 1, 3, false)
	if m := fullMark(t, pool, g.Name, "org/2"); m != 3 {
		t.Fatalf("org/2 full: mark %d, want 3", m)
	}

	// A slot deleted by hand clears the mark as well.
	if _, err := pool.Exec(ctx, "DELETE FROM once.counter_slots WHERE name = $1 AND key = 'org/2' AND slot = (SELECT min(slot) FROM once.counter_slots WHERE name = $1 AND key = 'org/2')", g.Name); err != nil {
		t.Fatal(err)
	}
	reserve(t, g, pool, "org/2", 1, 3, true)

	// A raised cap does not read a mark made at a lower one; a guard still at the lower cap
	// counts the slot taken above its mark.
	raised := once.Statement{Name: g.Name, Cap: 5}
	reserve(t, raised, pool, "org/1", 1, 4, true)
	reserve(t, g, pool, "org/1", 1, 4, false)
	// A lowered cap reads a mark made at a higher one, which says how many units the key holds.
	reserve(t, raised, pool, "org/1", 1, 5, true)
	reserve(t, raised, pool, "org/1", 1, 5, false)
	if m := fullMark(t, pool, g.Name, "org/1"); m != 5 {
		t.Fatalf("org/1 full at 5: mark %d, want 5", m)
	}
	lowered := once.Statement{Name: g.Name, Cap: 2}
	reserve(t, lowered, pool, "org/1", 1, 5, false)
	if used := counterUsed(t, pool, g.Name, "org/1"); used != 5 {
		t.Fatalf("org/1 holds %d units, want 5", used)
	}
}

// The mark is made only if no slot was given back since the refusal's snapshot. Here the
// give-back is uncommitted when the refusal reads: the refusal counts the key full, and its
// mark waits for the give-back's lock on the key's row, then finds the row made (a key never
// marked) or its epoch moved (a key marked and cleared before) and makes none, so the freed
// unit is reserved again. The negative controls send the same statement without that check
// (an insert that overwrites the give-back's row; an update that ignores the epoch): each
// marks the key full with a unit free, and the next reservation is refused although the cap
// has room.
func TestStatement_AGiveBackAfterTheRefusalsSnapshotStopsItsMark(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		markedBefore  bool   // the key was marked and a give-back cleared it before the race
		check         bool   // the statement as sent; false: the control, without the check
		from, without string // the control's statement: ReserveSQL with from replaced
	}{
		{name: "a key never marked", check: true},
		{name: "negative control: a key never marked, the insert overwrites", from: "ON CONFLICT (name, key) DO NOTHING", without: "ON CONFLICT (name, key) DO UPDATE SET cap = EXCLUDED.cap"},
		{name: "a key marked and cleared before", markedBefore: true, check: true},
		{name: "negative control: a key marked and cleared before, no epoch check", markedBefore: true, from: "AND f.epoch = known.epoch", without: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pool := setup(t, 4)
			ctx := context.Background()
			g := once.Statement{Name: "ideas.Generate", Cap: 2}
			reserve(t, g, pool, "org/1", 2, 2, true)
			if c.markedBefore {
				reserve(t, g, pool, "org/1", 1, 2, false)
				if err := g.Refund(ctx, pool, "org/1", 1); err != nil {
					t.Fatal(err)
				}
				reserve(t, g, pool, "org/1", 1, 2, true)
			}

			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "DELETE FROM once.counter_slots WHERE name = $1 AND key = 'org/1' AND slot = (SELECT min(slot) FROM once.counter_slots WHERE name = $1 AND key = 'org/1')", g.Name); err != nil {
				t.Fatal(err)
			}

			type answer struct {
				used, got int64
				err       error
			}
			done := make(chan answer, 1)
			go func() {
				sql := once.ReserveSQL
				if !c.check {
					if !strings.Contains(sql, c.from) {
						panic("the control's check is not in the statement: " + c.from)
					}
					sql = strings.Replace(sql, c.from, c.without, 1)
				}
				var a answer
				a.err = pool.QueryRow(ctx, sql, g.Name, "org/1", int64(1), g.Cap, int64(0), int64(1), "0123456789abcdef0123456789abcdef").Scan(&a.used, &a.got)
				done <- a
			}()
			waitForLockWait(t, pool)
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			a := <-done
			if a.err != nil || a.used != 2 || a.got != 0 {
				t.Fatalf("the refusal: used %d, got %d, %v; want refused at 2", a.used, a.got, a.err)
			}

			m := fullMark(t, pool, g.Name, "org/1")
			used, ok, err := g.Reserve(ctx, pool, "org/1", 1)
			if err != nil {
				t.Fatal(err)
			}
			if c.check {
				if m != -1 || !ok || used != 2 {
					t.Fatalf("after the give-back: mark %d, Reserve = %d, %v; want no mark and the freed unit reserved", m, used, ok)
				}
				return
			}
			if m != 2 || ok {
				t.Fatalf("control: mark %d, Reserve = %d, %v; want the stale mark to refuse a free unit (what the epoch check prevents)", m, used, ok)
			}
		})
	}
}

// waitForLockWait returns once a statement of the pool's database waits for a lock.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	waitForLockWaits(t, pool, 1)
}

// waitForLockWaits returns once n statements of the pool's database wait for a lock.
func waitForLockWaits(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for lockWaits(t, pool) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d statements came to wait for a lock within 20 s", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitForLockWaitsToFall returns once at most n statements of the pool's database wait for a
// lock.
func waitForLockWaitsToFall(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for waiting := lockWaits(t, pool); waiting > n; waiting = lockWaits(t, pool) {
		if time.Now().After(deadline) {
			t.Fatalf("%d statements still wait for a lock after 5 s; want %d", waiting, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockWaits counts the statements of the pool's database that wait for a lock.
func lockWaits(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A reservation's round trips follow its guard's history. While most of a guard's keys hold
// no unit, a reservation of one unit is first the plain insert of a new key's first slot: one
// statement for a new key, two (then the reservation) for a key holding units. While most of
// its reservations meet keys holding units, it is the reservation alone, a refusal too. While
// most are refused, it first reads the key's full mark: a refusal of a marked key is that read
// alone, a reservation that fits is the read and the reservation.
func TestStatement_RoundTrips(t *testing.T) {
	t.Parallel()
	pool, tracer := setupTraced(t)
	ctx := context.Background()
	g := once.Statement{Name: "roundtrips.Generate", Cap: 2}
	shares := func(refused, busy float64) {
		once.SetStatementRefusalShare(g.Name, refused)
		once.SetStatementBusyShare(g.Name, busy)
	}
	// Warm the connection's statement cache: pgx prepares each statement on first use.
	shares(0, 0)
	g.Reserve(ctx, pool, "warm", 1)
	shares(1, 1)
	g.Reserve(ctx, pool, "warm", 1)
	g.Reserve(ctx, pool, "warm", 1)
	g.Reserve(ctx, pool, "warm", 1)
	// Each step names the statement it ends with: the reservation, the read of the full mark,
	// or the insert of a new key's first slot.
	names := map[string]string{once.ReserveSQL: "reservation", once.FullSQL: "read", once.FirstSQL: "first slot"}
	step := func(what, key string, wantOK bool, wantTrips int64, wantLast string) {
		t.Helper()
		if _, ok, err := g.Reserve(ctx, pool, key, 1); err != nil || ok != wantOK {
			t.Fatalf("%s: %v, %v; want reserved %v", what, ok, err, wantOK)
		}
		if trips, stmts := tracer.take(); trips != wantTrips || stmts != wantTrips {
			t.Fatalf("%s: %d round trips, %d statements; want %d", what, trips, stmts, wantTrips)
		}
		if last := names[tracer.lastSQL()]; last != wantLast {
			t.Fatalf("%s: the last statement was the %q, want the %s", what, last, wantLast)
		}
	}
	shares(0, 0)
	tracer.take()
	step("new key, first slot alone", "a", true, 1, "first slot")
	step("key holding a unit: first slot, then the reservation", "a", true, 2, "reservation")
	shares(0, 1)
	step("full, reservation alone, marks the key", "a", false, 1, "reservation")
	step("full, reservation alone again", "a", false, 1, "reservation")
	step("full: refusals turned the read on, the read alone", "a", false, 1, "read")
	step("new key: the read finds no mark, then the reservation", "b", true, 2, "reservation")
	shares(1, 1)
	step("full, the read alone", "a", false, 1, "read")
	shares(0, 0)
	step("new key after the storm: first slot alone", "c", true, 1, "first slot")
}

// A TRUNCATE empties once.counter_slots without a row-level delete, and an update by hand
// can move a slot out of its key: the delete trigger sees neither, so step 5 clears the
// marks on both. Without that (the negative controls drop those triggers), the key marked
// full keeps its mark with a slot below it free, no slot sits at or above the mark, and every
// reservation of the key is refused for good.
func TestStatement_TruncateAndUpdatesOfTheSlotsClearTheMarks(t *testing.T) {
	t.Parallel()
	const (
		truncate = "TRUNCATE once.counter_slots"
		move     = "UPDATE once.counter_slots SET key = 'org/2' WHERE key = 'org/1' AND slot = 0"
	)
	for _, c := range []struct {
		name, change, drop string
	}{
		{"truncate", truncate, ""},
		{"update", move, ""},
		{"negative control: truncate, no truncate trigger", truncate, "counter_slots_truncated"},
		{"negative control: update, no update trigger", move, "counter_slots_moved"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pool := setup(t, 2)
			ctx := context.Background()
			g := once.Statement{Name: "ideas.Generate", Cap: 2}
			reserve(t, g, pool, "org/1", 2, 2, true)
			reserve(t, g, pool, "org/1", 1, 2, false)
			if m := fullMark(t, pool, g.Name, "org/1"); m != 2 {
				t.Fatalf("mark %d, want 2", m)
			}
			if c.drop != "" {
				exec(t, pool, "DROP TRIGGER "+c.drop+" ON once.counter_slots")
			}
			exec(t, pool, c.change)
			used, ok, err := g.Reserve(ctx, pool, "org/1", 1)
			if err != nil {
				t.Fatal(err)
			}
			if c.drop != "" {
				if ok {
					t.Fatalf("control: Reserve = %d, %v; want the stale mark to refuse a free unit (what the trigger prevents)", used, ok)
				}
				return
			}
			if m := fullMark(t, pool, g.Name, "org/1"); !ok || m != -1 {
				t.Fatalf("after %s: Reserve = %d, %v, mark %d; want the freed unit reserved and no mark", c.change, used, ok, m)
			}
		})
	}
}

// A storm on two keys of one guard name, under three caps at once (a cap lowered and raised
// while callers of the old one still run), mixing reservations of one and two units,
// refunds, failed work given back by token and refusals answered by the mark: no statement
// deadlocks or fails, no reservation passes its cap, no refusal is wrong at its snapshot,
// and once the storm is over every mark tells the truth (each slot below its cap held), so
// the keys fill to the highest cap exactly. The negative control runs the storm without the
// delete trigger: marks stay behind with slots below them free.
func TestStatement_MarkStormKeepsEveryMarkTrue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		control bool
	}{{"storm", false}, {"negative control: no delete trigger", true}} {
		t.Run(c.name, func(t *testing.T) {
			pool := setup(t, stormConns)
			ctx := context.Background()
			name := "storm.Marks"
			if c.control {
				name = "storm.MarksControl"
				exec(t, pool, "DROP TRIGGER counter_slots_given_back ON once.counter_slots")
			}
			guards := []once.Statement{{Name: name, Cap: 5}, {Name: name, Cap: 8}, {Name: name, Cap: 3}}
			keys := []string{"org/1", "org/2"}
			var made, refused, refunds atomic.Int64
			storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
				for i := range 30 {
					g, key := guards[(caller+i)%3], keys[(caller/2+i)%2]
					switch op := (caller + 7*i) % 5; op {
					case 0, 1:
						n := int64(1 + op)
						used, ok, err := g.Reserve(ctx, conn, key, n)
						switch {
						case err != nil:
							return err
						case ok && used > g.Cap:
							return fmt.Errorf("reserved %d under cap %d with %d used", n, g.Cap, used)
						case !ok && used+n <= g.Cap:
							return fmt.Errorf("refused %d under cap %d with %d used", n, g.Cap, used)
						case ok:
							made.Add(1)
						default:
							refused.Add(1)
						}
					case 2:
						switch err := g.Refund(ctx, conn, key, 1); {
						case err == nil:
							refunds.Add(1)
						case !errors.Is(err, once.ErrInvalid):
							return err
						}
					default:
						if _, _, err := stmtValue(ctx, g, conn, key, 1, func(context.Context) (int, error) { return 0, errBoom }); err != nil && !errors.Is(err, errBoom) {
							return err
						}
					}
				}
				return nil
			})
			if made.Load() == 0 || refused.Load() == 0 || refunds.Load() == 0 {
				t.Fatalf("%d made, %d refused, %d refunds: the storm did not mix them", made.Load(), refused.Load(), refunds.Load())
			}
			var stale int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM once.counter_full AS f WHERE f.name = $1 AND f.cap IS NOT NULL
				AND (SELECT count(*) FROM once.counter_slots AS s WHERE s.name = f.name AND s.key = f.key AND s.slot < f.cap) < f.cap`, name).Scan(&stale); err != nil {
				t.Fatal(err)
			}
			if c.control {
				if stale == 0 {
					t.Fatal("control: every mark true without the delete trigger; the storm cannot see a stale mark")
				}
				return
			}
			if stale != 0 {
				t.Fatalf("%d marks with a slot below them free", stale)
			}
			for _, key := range keys {
				for {
					_, ok, err := guards[1].Reserve(ctx, pool, key, 1)
					if err != nil {
						t.Fatal(err)
					}
					if !ok {
						break
					}
				}
				if used := counterUsed(t, pool, name, key); used != 8 {
					t.Errorf("%s filled to %d under the highest cap, want 8", key, used)
				}
			}
		})
	}
}
