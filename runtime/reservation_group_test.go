package once_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

// A storm of Do calls on one key through a pool, a quarter of whose functions fail and are
// refunded: the units held at the end are exactly the reservations kept, never more than the
// cap, and the reservations went in groups, several to a statement.
func TestStatement_StormOnAPoolReservesInGroups(t *testing.T) {
	t.Parallel()
	var statements, members, largest atomic.Int64
	pool := setupTracer(t, onStatement{once.GroupReserveSQL, func(args []any) {
		n := int64(len(args[2].([]string)))
		statements.Add(1)
		members.Add(n)
		for l := largest.Load(); n > l; l = largest.Load() {
			if largest.CompareAndSwap(l, n) {
				break
			}
		}
	}}, 8)
	const capacity, callers, attempts = 60, 16, 25
	g := once.Statement{Name: "group.Generate", Cap: capacity}
	once.SetStatementBusyShare(g.Name, 1)
	var kept, refused atomic.Int64
	together(t, callers, func(ctx context.Context, c int) error {
		for i := range attempts {
			fail := (c+i)%4 == 0
			_, out, err := stmtValue(ctx, g, pool, "org/1", 1, func(context.Context) (int, error) {
				if fail {
					return 0, errors.New("the work failed")
				}
				return 1, nil
			})
			switch {
			case fail && out.Status == once.Ran:
				// refunded
			case err != nil:
				return err
			case out.Status == once.Ran:
				kept.Add(1)
			default:
				refused.Add(1)
			}
		}
		return nil
	})
	used := counterUsed(t, pool, g.Name, "org/1")
	if used != kept.Load() || used > capacity {
		t.Errorf("%d units held for %d reservations kept; want them equal, and at most the cap %d", used, kept.Load(), capacity)
	}
	if refused.Load() == 0 {
		t.Errorf("no reservation was refused: the storm never filled the key")
	}
	t.Logf("%d group statements carried %d reservations, the largest %d", statements.Load(), members.Load(), largest.Load())
	if largest.Load() < 2 {
		t.Errorf("no group statement carried more than one reservation")
	}
}

// holdFirstGroup holds the first reservation made alone before it is sent, and the answer
// of the first group statement (which has run and committed, but its members have not heard),
// until release is closed.
type holdFirstGroup struct {
	lone, group       sync.Once
	loneSent          chan struct{}
	answered, release chan struct{}
}

func (h *holdFirstGroup) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	first := false
	switch d.SQL {
	case once.ReserveSQL:
		h.lone.Do(func() { first = true })
		if first {
			close(h.loneSent)
			<-h.release
		}
	case once.GroupReserveSQL:
		h.group.Do(func() { first = true })
		if first {
			return context.WithValue(ctx, heldGroup{}, true)
		}
	}
	return ctx
}

func (h *holdFirstGroup) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(heldGroup{}) != nil {
		close(h.answered)
		<-h.release
	}
}

// heldGroup marks the context of the statement holdFirstGroup holds.
type heldGroup struct{}

// A reservation joins only a group not yet sent. The key's one unit is held; a reservation
// made alone is held up before it is sent, so that the next one goes in a group, which is
// refused and whose answer is held up; the unit is given back; a reservation begun after the
// give-back must get it. The negative control is that group's own answer, which a
// reservation joining the group already sent would get: its snapshot predates the give-back,
// and it refuses the unit that was free before the second reservation began.
func TestStatement_AReservationJoinsOnlyAGroupNotYetSent(t *testing.T) {
	t.Parallel()
	second, sentGroup := reserveBehindASentGroup(t, "group.Fresh")
	if !second {
		t.Error("a reservation begun after the give-back was refused the unit given back")
	}
	if sentGroup {
		t.Error("negative control: the group sent before the give-back reserved the unit: the test cannot see the race it guards against")
	}
}

// reserveBehindASentGroup runs the rounds of the test above and reports whether the second
// reservation was made, and whether the group sent before the give-back made its member's.
func reserveBehindASentGroup(t *testing.T, name string) (second, sentGroup bool) {
	t.Helper()
	hold := &holdFirstGroup{loneSent: make(chan struct{}), answered: make(chan struct{}), release: make(chan struct{})}
	pool := setupTracer(t, hold, 4)
	ctx := context.Background()
	g := once.Statement{Name: name, Cap: 1}
	once.SetStatementRefusalShare(g.Name, 0)
	once.SetStatementBusyShare(g.Name, 0) // the first slot's plain insert
	if _, ok, err := g.Reserve(ctx, pool, "org/1", 1); err != nil || !ok {
		t.Fatalf("filling the key: %v, %v", ok, err)
	}
	once.SetStatementBusyShare(g.Name, 1) // the reservation, not the first slot's insert
	type result struct {
		ok  bool
		err error
	}
	call := func() chan result {
		c := make(chan result, 1)
		go func() {
			_, ok, err := g.Reserve(ctx, pool, "org/1", 1)
			c <- result{ok, err}
		}()
		return c
	}
	alone := call()
	<-hold.loneSent
	first := call()
	<-hold.answered
	if err := g.Refund(ctx, pool, "org/1", 1); err != nil {
		t.Fatal(err)
	}
	later := call()
	var r result
	select {
	case r = <-later:
		close(hold.release)
	case <-time.After(2 * time.Second):
		close(hold.release) // the second joined the held group: it hears once the group does
		r = <-later
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	f := <-first
	if f.err != nil {
		t.Fatal(f.err)
	}
	// Once the second has the unit, the one made alone, sent last, is refused.
	if a := <-alone; a.err != nil || (a.ok && r.ok) {
		t.Fatalf("the reservation made alone: %v, %v; want it refused once the second has the unit", a.ok, a.err)
	}
	return r.ok, f.ok
}

// Members whose contexts end while their groups wait on a transaction inserting every slot
// of the key keep nothing, and the members that stay get their slots. The first caller
// reserves alone and waits; the second forms a group behind it alone, which waits too; the
// three after it gather in a third group, which waits as well. The first two callers and one
// of the three give up: the second's group, which nobody waits for any more, is cancelled
// (it stops waiting on the lock), and the third's statement goes on. Once the transaction
// rolls back, the third group inserts a slot for each of its members, and the one that left
// is given back. The negative control breaks the database so that a give-back deletes
// nothing (a trigger drops every delete of a slot), as a runtime that kept the slots of
// members that left would: the key then holds a unit nobody knows of.
func TestStatement_MembersThatLeaveTheirGroupKeepNothing(t *testing.T) {
	t.Parallel()
	if used, stayed := leaveGroups(t, "group.Leave", false); used != stayed {
		t.Errorf("%d units held for %d callers that stayed and were served", used, stayed)
	}
}

func TestStatement_NegativeControl_KeepingTheSlotsOfMembersThatLeft(t *testing.T) {
	t.Parallel()
	if used, stayed := leaveGroups(t, "group.LeaveWrong", true); used == stayed {
		t.Errorf("with give-backs dropped, %d units held for %d callers served: the test cannot see what it guards against", used, stayed)
	}
}

// keepSlots makes every delete of a slot of pool's database delete nothing: a give-back is
// dropped, as a runtime that kept slots it should give back would leave them.
func keepSlots(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	exec(t, pool, `CREATE FUNCTION keep_slot() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`)
	exec(t, pool, `CREATE TRIGGER keep_slot BEFORE DELETE ON once.counter_slots FOR EACH ROW EXECUTE FUNCTION keep_slot()`)
}

// leaveGroups runs the test above and returns the units held at the end and the reservations
// made. With keep, give-backs are dropped (keepSlots).
func leaveGroups(t *testing.T, name string, keep bool) (used, made int64) {
	t.Helper()
	pool := setup(t, 6)
	if keep {
		keepSlots(t, pool)
	}
	ctx := context.Background()
	const capacity = 3
	g := once.Statement{Name: name, Cap: capacity}
	once.SetStatementRefusalShare(g.Name, 0)
	once.SetStatementBusyShare(g.Name, 1)
	blocker := insertingFreeSlots(t, pool, g.Name, "org/1", capacity)
	type result struct {
		ok  bool
		err error
	}
	call := func(ctx context.Context) chan result {
		c := make(chan result, 1)
		go func() {
			_, ok, err := g.Reserve(ctx, pool, "org/1", 1)
			c <- result{ok, err}
		}()
		return c
	}
	leaveCtx, leave := context.WithCancel(ctx)
	defer leave()
	alone := call(leaveCtx)
	waitForLockWaits(t, pool, 1)
	groupOfOne := call(leaveCtx)
	waitForLockWaits(t, pool, 2)
	leaver := call(leaveCtx)
	stayers := []chan result{call(ctx), call(ctx)}
	waitForLockWaits(t, pool, 3)
	leave()
	// The reservation alone is cancelled by its caller's context, the group of one by the
	// group's, which ended with its only member's: only the third group waits on.
	waitForLockWaitsToFall(t, pool, 1)
	if err := blocker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]chan result{"the caller alone": alone, "the group of one": groupOfOne, "the member that left": leaver} {
		if r := <-c; !errors.Is(r.err, context.Canceled) {
			t.Errorf("%s: %v, %v; want its context's error", what, r.ok, r.err)
		}
	}
	for i, c := range stayers {
		r := <-c
		if r.err != nil || !r.ok {
			t.Fatalf("caller %d that stayed: %v, %v; want its unit", i, r.ok, r.err)
		}
		made++
	}
	return counterUsed(t, pool, g.Name, "org/1"), made
}

// insertingFreeSlots begins a transaction that inserts every slot of key below capacity not
// already held, and leaves it open: a reservation that picks one of them waits for it. The
// transaction is rolled back at the end of the test, if not before.
func insertingFreeSlots(t *testing.T, pool *pgxpool.Pool, name, key string, capacity int) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, `INSERT INTO once.counter_slots (name, key, slot, token)
SELECT $1, $2, s, 'blocker' FROM generate_series(0, $3 - 1) AS s
WHERE NOT EXISTS (SELECT FROM once.counter_slots WHERE name = $1 AND key = $2 AND slot = s)`, name, key, capacity); err != nil {
		t.Fatal(err)
	}
	return tx
}

// A storm of reservations on one key through a pool, with deadlines from a fifth of a
// caller's round trip alone to twenty: some callers leave before their group is sent, some
// after, some are cut off reserving alone. The units held at the end are exactly the
// reservations their callers were told of.
func TestStatement_CancelledStormOnAPoolHoldsOnlyWhatCallersWereTold(t *testing.T) {
	t.Parallel()
	pool := setup(t, 8)
	g := once.Statement{Name: "group.Cancelled", Cap: 1000}
	told, cut, used := cancelledGroupStorm(t, pool, g, "org/1")
	if used != told {
		t.Errorf("%d units held for %d reservations their callers were told of", used, told)
	}
	if cut == 0 {
		t.Errorf("no reservation was cut off: the deadlines never fired")
	}
}

// The negative control: the same storm on a database that drops every give-back (keepSlots),
// as a runtime keeping the slots of members that left would, holds units nobody was told of.
// Whether a caller leaves a group already sent is a matter of timing: storm again, on a
// fresh key, until one does.
func TestStatement_NegativeControl_CancelledStormKeepingTheSlotsOfMembersThatLeft(t *testing.T) {
	t.Parallel()
	pool := setup(t, 8)
	keepSlots(t, pool)
	g := once.Statement{Name: "group.CancelledWrong", Cap: 1000}
	for round := range 5 {
		told, _, used := cancelledGroupStorm(t, pool, g, fmt.Sprintf("org/%d", round))
		if used > told {
			return
		}
	}
	t.Error("five storms kept no slot of a member that left: the test cannot see what it guards against")
}

// cancelledGroupStorm runs the storm of the test above on key and returns the reservations
// their callers were told of, the calls cut off and the units held at the end.
func cancelledGroupStorm(t *testing.T, pool *pgxpool.Pool, g once.Statement, key string) (told, cut, used int64) {
	t.Helper()
	ctx := context.Background()
	const callers, attempts = 16, 30
	once.SetStatementBusyShare(g.Name, 1)
	var rtt time.Duration
	for i := range 21 {
		start := time.Now()
		if _, _, err := g.Reserve(ctx, pool, key+"/rtt", 1); err != nil {
			t.Fatal(err)
		}
		if i > 0 { // the first also opens a connection
			rtt += time.Since(start) / 20
		}
	}
	var toldN, cutN atomic.Int64
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range attempts {
				d := time.Duration(float64(rtt) * (0.2 + 20*rand.Float64()))
				cctx, cancel := context.WithTimeout(ctx, d)
				_, ok, err := g.Reserve(cctx, pool, key, 1)
				cancel()
				switch {
				case err == nil && ok:
					toldN.Add(1)
				case err == nil:
					t.Errorf("a reservation refused below the cap")
				case !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err):
					t.Errorf("a reservation with a deadline: %v; want its deadline's error or an answer", err)
				default:
					cutN.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	time.Sleep(time.Second) // clean-ups behind a pooler recheck for a while
	used = counterUsed(t, pool, g.Name, key)
	t.Logf("%d reservations told, %d cut off, %d units held", toldN.Load(), cutN.Load(), used)
	return toldN.Load(), cutN.Load(), used
}

// A group refuses a member only if the key was full in its snapshot. The key has a cap of 2
// and holds one unit; an open transaction inserts the other slot. A reservation made alone
// waits on it, so two callers gather in a group behind it, which picks the one slot free in
// its snapshot and waits on it too. Then the first caller gives up, the held unit is refunded
// and the transaction rolls back: the key never held more than one unit, so both callers must
// get one. (Refusing the member the group's own slot left without, as full, refused it.)
func TestStatement_AGroupRefusesOnlyAKeyThatWasFull(t *testing.T) {
	t.Parallel()
	pool := setup(t, 8)
	ctx := context.Background()
	g := once.Statement{Name: "group.TrueRefusal", Cap: 2}
	once.SetStatementRefusalShare(g.Name, 0)
	once.SetStatementBusyShare(g.Name, 0)
	if _, ok, err := g.Reserve(ctx, pool, "org/1", 1); err != nil || !ok {
		t.Fatalf("the first unit: %v, %v", ok, err)
	}
	once.SetStatementBusyShare(g.Name, 1)
	blocker := insertingFreeSlots(t, pool, g.Name, "org/1", 2)
	pilotCtx, cancelPilot := context.WithCancel(ctx)
	defer cancelPilot()
	pilot := make(chan error, 1)
	go func() { _, _, err := g.Reserve(pilotCtx, pool, "org/1", 1); pilot <- err }()
	waitForLockWaits(t, pool, 1)
	type result struct {
		used int64
		ok   bool
		err  error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() { used, ok, err := g.Reserve(ctx, pool, "org/1", 1); results <- result{used, ok, err} }()
	}
	waitForLockWaits(t, pool, 2)
	cancelPilot()
	if err := <-pilot; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first caller: %v", err)
	}
	if err := g.Refund(ctx, pool, "org/1", 1); err != nil {
		t.Fatal(err)
	}
	if err := blocker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := <-results; r.err != nil || !r.ok {
			t.Errorf("a caller got %d, %v, %v; want a unit: the key never held more than one of its two", r.used, r.ok, r.err)
		}
	}
	if used := counterUsed(t, pool, g.Name, "org/1"); used != 2 {
		t.Errorf("%d units held; want the two callers'", used)
	}
}

// A reservation's statements are planned at a cost below jit_above_cost whatever the cap: a
// plan above it is compiled before it runs, hundreds of milliseconds a statement. At a cap of
// 2^40, with the parameters of a custom plan (the first five executions on a connection are
// planned so), the cost must stay that of a few index probes. A LIMIT the planner cannot
// read (a subquery on the count) costs the walk as a share of the cap: about 10^10 here.
func TestStatement_AHugeCapIsNotPlannedPastJITsThreshold(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	var threshold float64
	if err := pool.QueryRow(ctx, "SELECT current_setting('jit_above_cost')::float8").Scan(&threshold); err != nil {
		t.Fatal(err)
	}
	const capacity = int64(1) << 40
	for _, c := range []struct {
		name string
		sql  string
		args []any
	}{
		{"reservation", once.ReserveSQL, []any{"huge.Generate", "k", int64(1), capacity, int64(7), int64(13), "t"}},
		{"group's reservation", once.GroupReserveSQL, []any{"huge.Generate", "k", []string{"a", "b"}, capacity, int64(7), int64(13)}},
	} {
		var out string
		if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+c.sql, c.args...).Scan(&out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plans []struct {
			Plan struct {
				TotalCost float64 `json:"Total Cost"`
			}
		}
		if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s: reading the plan: %v", c.name, err)
		}
		if cost := plans[0].Plan.TotalCost; cost >= threshold {
			t.Errorf("the %s at a cap of 2^40 is planned at %.0f, past jit_above_cost (%.0f)", c.name, cost, threshold)
		}
	}
}
