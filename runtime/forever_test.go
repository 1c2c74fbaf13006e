package once_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// receipt is the result type of the tests' forever functions: what a paid call returns.
type receipt struct {
	ChargeID string            `json:"charge_id"`
	Amount   int64             `json:"amount"`
	Tags     map[string]string `json:"tags,omitempty"`
}

// operationRow is a row of once.operations as the tests check it.
type operationRow struct {
	state         string
	attempts      int
	errText       string
	recoveryPoint string
}

func operationState(t testing.TB, db once.DB, id string) operationRow {
	t.Helper()
	var r operationRow
	err := db.QueryRow(context.Background(), `SELECT state::text, attempts, coalesce(error, ''), coalesce(recovery_point, '')
FROM once.operations WHERE id = $1::uuid`, id).Scan(&r.state, &r.attempts, &r.errText, &r.recoveryPoint)
	if err != nil {
		t.Fatalf("reading operation %s: %v", id, err)
	}
	return r
}

// operationTables counts every row in the tables forever and operations write.
func operationTables(t testing.TB, db once.DB) int {
	t.Helper()
	var n int
	err := db.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM once.operations) +
		(SELECT count(*) FROM once.checkpoints) + (SELECT count(*) FROM once.ledger) +
		(SELECT count(*) FROM once.followups)`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// roundTrips is a pgx tracer that counts what reaches the server: round trips (a statement
// sent alone, or a pipelined batch) and statements (each one, in a batch or not).
// It also keeps the text of the last statement sent alone.
type roundTrips struct {
	trips, statements atomic.Int64
	last              atomic.Pointer[string]
}

func (c *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.trips.Add(1)
	c.statements.Add(1)
	c.last.Store(&d.SQL)
	return ctx
}

// lastSQL is the text of the last statement sent alone.
func (c *roundTrips) lastSQL() string {
	if p := c.last.Load(); p != nil {
		return *p
	}
	return ""
}
func (c *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.trips.Add(1)
	return ctx
}
func (c *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.statements.Add(1)
}
func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *roundTrips) take() (trips, statements int64) {
	return c.trips.Swap(0), c.statements.Swap(0)
}

// setupTraced is setup with a one-connection pool whose round trips are counted.
func setupTraced(t testing.TB) (*pgxpool.Pool, *roundTrips) {
	t.Helper()
	tracer := &roundTrips{}
	pool := setupTracer(t, tracer, 1)
	tracer.take()
	return pool, tracer
}

func TestForever_FirstCallRunsLaterCallsGetTheRecordedResult(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	runs := 0
	charge := func(ctx context.Context) (receipt, error) {
		runs++
		return receipt{ChargeID: "ch_" + strconv.Itoa(runs), Amount: 500, Tags: map[string]string{"plan": "pro"}}, effect(ctx, pool, "forever", "order/7", runs)
	}
	first, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/7"}, charge)
	if err != nil || out.Status != once.Ran || out.Claim == "" {
		t.Fatalf("first call: %+v, %v; want Ran with a handle", out, err)
	}
	for range 3 {
		again, out2, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/7"}, charge)
		if err != nil || out2.Status != once.Duplicate || out2.Holder != out.Claim {
			t.Fatalf("repeat: %+v, %v; want Duplicate of %s", out2, err, out.Claim)
		}
		if again.ChargeID != first.ChargeID || again.Amount != 500 || again.Tags["plan"] != "pro" {
			t.Fatalf("repeat got %+v, want the recorded %+v", again, first)
		}
	}
	if n := effects(t, pool, "forever", "order/7"); n != 1 || runs != 1 {
		t.Fatalf("%d effects, %d runs; want 1", n, runs)
	}
	if r := operationState(t, pool, out.Claim); r.state != "done" || r.attempts != 1 {
		t.Fatalf("operation %+v, want done after 1 attempt", r)
	}
}

// The storm runs twice: with the guard reading each key's row before its claim, and with it
// sending the claim alone and reading after a conflict, which is what a guard whose keys are
// mostly new does (the share of duplicates is set before each call; the storm's own
// duplicates may still turn reading first on for a call or two).
func TestForever_ConcurrentDuplicatesRunOnce(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	for _, share := range []float64{1, 0} {
		g := once.Forever{Name: "billing.Charge." + strconv.FormatFloat(share, 'f', -1, 64)}
		key := "order/1"
		var inFlight atomic.Int64
		allAnswered := make(chan struct{})
		outs := make([]once.Outcome, stormSize)
		storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
			once.SetDuplicateShare(g.Name, share)
			_, out, err := once.ForeverValue(ctx, conn, g, once.Ref{Key: key}, func(ctx context.Context) (receipt, error) {
				// Hold the claim until every other caller has been answered, so all of them
				// met it while it was open.
				select {
				case <-allAnswered:
				case <-time.After(20 * time.Second):
				}
				return receipt{ChargeID: "ch_" + strconv.Itoa(caller)}, effect(ctx, conn, g.Name, key, caller)
			})
			outs[caller] = out
			if err == nil && out.Status == once.InFlight {
				if inFlight.Add(1) == stormSize-1 {
					close(allAnswered)
				}
			}
			return err
		})
		if n := effects(t, pool, g.Name, key); n != 1 {
			t.Fatalf("%s: %d effects from %d concurrent callers, want exactly 1", g.Name, n, stormSize)
		}
		ran := 0
		for _, o := range outs {
			if o.Status == once.Ran {
				ran++
			}
		}
		if ran != 1 || inFlight.Load() != stormSize-1 {
			t.Fatalf("%s: %d ran, %d in flight; want 1 and %d", g.Name, ran, inFlight.Load(), stormSize-1)
		}
		v, out, err := once.ForeverValue(context.Background(), pool, g, once.Ref{Key: key}, func(context.Context) (receipt, error) {
			t.Fatal("ran again after the storm")
			return receipt{}, nil
		})
		if err != nil || out.Status != once.Duplicate || v.ChargeID == "" {
			t.Fatalf("%s: after the storm: %+v %+v %v; want the recorded receipt", g.Name, v, out, err)
		}
	}
}

func TestForever_NegativeControl_CheckThenActChargesEveryCaller(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	checked := newBarrier(stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM effects WHERE key = 'order/1'").Scan(&n); err != nil {
			return err
		}
		if err := checked.wait(ctx); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		return effect(ctx, conn, "forever", "order/1", caller)
	})
	if n := effects(t, pool, "forever", "order/1"); n != stormSize {
		t.Fatalf("%d effects without the guard, want %d: the control must show the race", n, stormSize)
	}
}

func TestForever_TerminalFailureIsRecordedAndReplayed(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	declined := errors.New("card declined")
	runs := 0
	fn := func(ctx context.Context) (receipt, error) {
		runs++
		return receipt{}, once.Terminal(declined)
	}
	_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/2"}, fn)
	if !errors.Is(err, declined) || out.Status != once.Ran {
		t.Fatalf("first call: %+v, %v; want Ran with the function's error", out, err)
	}
	_, out2, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/2"}, fn)
	var f *once.Failure
	if !errors.As(err, &f) || f.Message != "card declined" || f.Operation != out.Claim || out2.Status != once.Duplicate {
		t.Fatalf("repeat: %+v, %v; want the recorded failure", out2, err)
	}
	if runs != 1 {
		t.Fatalf("%d runs, want 1", runs)
	}
	if r := operationState(t, pool, out.Claim); r.state != "failed" || r.errText != "card declined" {
		t.Fatalf("operation %+v, want failed with the message", r)
	}
}

// An error's text is whatever its maker put in it, such as a provider's answer quoted: a NUL
// byte or invalid UTF-8 there, which a text column refuses, must not leave the outcome
// unrecorded (the claim open, and after Stale uncertain).
func TestForever_ErrorTextTheColumnRefusesIsRecordedCleaned(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	for _, c := range []struct {
		key   string
		err   error
		state string
	}{
		{"order/terminal", once.Terminal(errors.New("declined: \x00\xff card")), "failed"},
		{"order/retryable", errors.New("provider answered \x00\xff"), "released"},
		{"order/long", once.Terminal(errors.New(strings.Repeat("é", 1500))), "failed"},
	} {
		_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: c.key}, func(context.Context) (receipt, error) { return receipt{}, c.err })
		if err == nil || errors.Is(err, once.ErrNotOwner) || strings.Contains(err.Error(), "recording operation") {
			t.Fatalf("%s: %v, want the function's error alone", c.key, err)
		}
		r := operationState(t, pool, out.Claim)
		if r.state != c.state || !utf8.ValidString(r.errText) || strings.ContainsRune(r.errText, 0) || len(r.errText) > 2000+len("…") {
			t.Fatalf("%s: operation %+v, want %s with its text cleaned", c.key, r, c.state)
		}
	}
	var f *once.Failure
	mustNotRun := func(context.Context) (receipt, error) { t.Error("a recorded failure ran again"); return receipt{}, nil }
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/terminal"}, mustNotRun); !errors.As(err, &f) || f.Message != "declined: \uFFFD card" {
		t.Fatalf("replay: %v, want the recorded failure's cleaned text", err)
	}
}

func TestForever_RetryableFailureReleasesTheClaim(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	runs := 0
	fn := func(ctx context.Context) (receipt, error) {
		runs++
		a, _ := once.AttemptFrom(ctx)
		if runs == 1 {
			return receipt{}, errors.New("provider answered 503")
		}
		return receipt{ChargeID: "ch_" + strconv.Itoa(a.Number())}, nil
	}
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/3"}, fn); err == nil || out.Status != once.Ran {
		t.Fatalf("first call: %+v, %v; want Ran with an error", out, err)
	} else if r := operationState(t, pool, out.Claim); r.state != "released" || !strings.Contains(r.errText, "503") {
		t.Fatalf("after a retryable failure: %+v, want released with the reason", r)
	}
	v, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/3"}, fn)
	if err != nil || out.Status != once.Ran || v.ChargeID != "ch_2" {
		t.Fatalf("retry: %+v %+v %v; want attempt 2 to run", v, out, err)
	}
	if r := operationState(t, pool, out.Claim); r.state != "done" || r.attempts != 2 {
		t.Fatalf("operation %+v, want done after 2 attempts", r)
	}
}

// The provider reference is drawn by the claim in the process: the attempt's provider keys
// come from the reference the row holds (in the server's text form), a retry of the
// operation keeps them, and each new operation has its own, a version 4 UUID.
func TestForever_ProviderKeysComeFromTheRowsReference(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	var keys []string
	fn := func(ctx context.Context) (receipt, error) {
		a, _ := once.AttemptFrom(ctx)
		keys = append(keys, a.ProviderKey("charge"))
		if len(keys) == 1 {
			return receipt{}, errors.New("provider answered 503")
		}
		return receipt{ChargeID: "ch_1"}, nil
	}
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/ref"}, fn)
	_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/ref"}, fn)
	if err != nil || out.Status != once.Ran || len(keys) != 2 {
		t.Fatalf("retry: %+v, %v, %d runs; want a second attempt to run", out, err, len(keys))
	}
	var ref string
	if err := pool.QueryRow(ctx, "SELECT id::text FROM once.operations WHERE id = $1::uuid", out.Claim).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	if want := once.ProviderKey("charge", ref); keys[0] != want || keys[1] != want {
		t.Fatalf("provider keys %q, want both %q (from the row's reference %s)", keys, want, ref)
	}
	if len(ref) != 36 || ref[14] != '4' || !strings.ContainsRune("89ab", rune(ref[19])) {
		t.Fatalf("reference %s is not a version 4 UUID", ref)
	}
	_, other, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/ref-2"}, fn)
	if err != nil {
		t.Fatal(err)
	}
	var otherRef string
	if err := pool.QueryRow(ctx, "SELECT id::text FROM once.operations WHERE id = $1::uuid", other.Claim).Scan(&otherRef); err != nil {
		t.Fatal(err)
	}
	if otherRef == ref || keys[2] == keys[0] {
		t.Fatalf("a new operation kept the reference %s", ref)
	}
}

func TestForever_UncertainIsRefusedListedAndResolved(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	runs := 0
	lost := func(ctx context.Context) (receipt, error) {
		runs++
		return receipt{}, once.Uncertain(errors.New("connection reset after the provider accepted"))
	}
	_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/4"}, lost)
	if !errors.Is(err, once.ErrUncertain) || out.Status != once.Ran {
		t.Fatalf("first call: %+v, %v; want Ran and ErrUncertain", out, err)
	}
	if _, out2, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/4"}, lost); !errors.Is(err, once.ErrUncertain) || out2.Status != once.Duplicate {
		t.Fatalf("repeat: %+v, %v; want ErrUncertain without running", out2, err)
	}
	if runs != 1 {
		t.Fatalf("%d runs of an uncertain operation, want 1", runs)
	}
	list, err := onceops.ListUncertain(ctx, pool, "billing.Charge", 0)
	if err != nil || len(list) != 1 || list[0].ID != out.Claim || !strings.Contains(list[0].Error, "connection reset") {
		t.Fatalf("ListUncertain = %+v, %v; want operation %s with its reason", list, err, out.Claim)
	}

	// The operator checked with the provider: the charge went through.
	if err := onceops.ResolveDone(ctx, pool, list[0].ID, receipt{ChargeID: "ch_found", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	if err := onceops.ResolveRetry(ctx, pool, list[0].ID); !errors.Is(err, onceops.ErrNotUncertain) {
		t.Fatalf("second resolution: %v, want ErrNotUncertain", err)
	}
	v, out3, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/4"}, lost)
	if err != nil || out3.Status != once.Duplicate || v.ChargeID != "ch_found" {
		t.Fatalf("after ResolveDone: %+v %+v %v; want the operator's result", v, out3, err)
	}

	// Another lost charge, which the operator finds never happened: released, it runs again.
	_, out4, _ := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/5"}, lost)
	id := out4.Claim
	if err := onceops.ResolveRetry(ctx, pool, id); err != nil {
		t.Fatal(err)
	}
	v, out5, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/5"}, func(context.Context) (receipt, error) { return receipt{ChargeID: "ch_retried"}, nil })
	if err != nil || out5.Status != once.Ran || v.ChargeID != "ch_retried" {
		t.Fatalf("after ResolveRetry: %+v %+v %v; want a new run", v, out5, err)
	}
	if list, _ := onceops.ListUncertain(ctx, pool, "", 0); len(list) != 0 {
		t.Fatalf("still listed after resolution: %+v", list)
	}
	if err := onceops.ResolveDone(ctx, pool, "00000000-0000-4000-8000-000000000000", nil); !errors.Is(err, onceops.ErrNoOperation) {
		t.Fatalf("resolving an unknown id: %v, want ErrNoOperation", err)
	}
}

func TestForever_ReusedKeyWithOtherInputIsRefused(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Generate"}
	input := map[string]any{"source": "q3.csv", "options": map[string]any{"format": "pdf", "pages": 3}}
	runs := 0
	fn := func(context.Context) (receipt, error) { runs++; return receipt{ChargeID: "r1"}, nil }
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-1", Input: input}, fn); err != nil {
		t.Fatal(err)
	}
	// The same input, its keys in another order and a number written differently: a retry.
	same := map[string]any{"options": map[string]any{"pages": 3.0, "format": "pdf"}, "source": "q3.csv"}
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-1", Input: same}, fn); err != nil || out.Status != once.Duplicate {
		t.Fatalf("same input reordered: %+v, %v; want Duplicate", out, err)
	}
	nested := map[string]any{"source": "q3.csv", "options": map[string]any{"format": "pdf", "pages": 4}}
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-1", Input: nested}, fn); !errors.Is(err, once.ErrMismatch) {
		t.Fatalf("nested field changed: %v, want ErrMismatch", err)
	}
	if runs != 1 {
		t.Fatalf("%d runs, want 1", runs)
	}
	// Once the retention window has passed, the key is forgotten with its input.
	kept := once.Forever{Name: "reports.Generate", Retain: time.Hour}
	if _, _, err := once.ForeverValue(ctx, pool, kept, once.Ref{Key: "ref-2", Input: input}, fn); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE once.operations SET expires_at = clock_timestamp() - interval '1 millisecond' WHERE key = 'ref-2'`); err != nil {
		t.Fatal(err)
	}
	if _, out, err := once.ForeverValue(ctx, pool, kept, once.Ref{Key: "ref-2", Input: nested}, fn); err != nil || out.Status != once.Ran {
		t.Fatalf("other input after the window: %+v, %v; want a new run", out, err)
	}
}

func TestForever_ScopesAreIndependent(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Generate"}
	run := func(scope string) (receipt, once.Outcome) {
		v, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Scope: scope, Key: "ref-1"}, func(ctx context.Context) (receipt, error) {
			return receipt{ChargeID: "for-" + scope}, effect(ctx, pool, "forever", scope, 0)
		})
		if err != nil {
			t.Fatal(err)
		}
		return v, out
	}
	a, outA := run("acct-a")
	b, outB := run("acct-b")
	if outA.Status != once.Ran || outB.Status != once.Ran || outA.Claim == outB.Claim {
		t.Fatalf("outcomes %+v and %+v: want two independent runs", outA, outB)
	}
	if a.ChargeID != "for-acct-a" || b.ChargeID != "for-acct-b" {
		t.Fatalf("results %+v, %+v: each scope must get its own", a, b)
	}
	if again, _ := run("acct-b"); again.ChargeID != "for-acct-b" {
		t.Fatalf("acct-b's replay is %+v", again)
	}
	if _, err := onceops.Lookup(ctx, pool, "reports.Generate", "acct-c", "ref-1"); !errors.Is(err, onceops.ErrNoOperation) {
		t.Fatalf("lookup from a third scope: %v, want ErrNoOperation", err)
	}
}

func TestForever_RetentionWindow(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Generate", Retain: time.Hour}
	runs := 0
	fn := func(ctx context.Context) (receipt, error) {
		runs++
		return receipt{ChargeID: "r" + strconv.Itoa(runs)}, nil
	}
	_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-1"}, fn)
	if err != nil {
		t.Fatal(err)
	}
	var kept time.Duration
	if err := pool.QueryRow(ctx, `SELECT (extract(epoch FROM expires_at - settled_at) * 1e6)::bigint FROM once.operations WHERE id = $1::uuid`,
		out.Claim).Scan((*int64)(&kept)); err != nil {
		t.Fatal(err)
	}
	if kept*time.Microsecond != time.Hour {
		t.Fatalf("kept for %v after settling, want Retain (1h)", kept*time.Microsecond)
	}
	// Move the window's end instead of waiting an hour: a retry a second before it ends...
	age := func(by string) {
		if _, err := pool.Exec(ctx, `UPDATE once.operations SET expires_at = clock_timestamp() + $1::interval WHERE key = 'ref-1'`, by); err != nil {
			t.Fatal(err)
		}
	}
	age("1 second")
	if v, out2, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-1"}, fn); err != nil || out2.Status != once.Duplicate || v.ChargeID != "r1" {
		t.Fatalf("just inside the window: %+v %+v %v; want the replay", v, out2, err)
	}
	// ...and a millisecond after it: the key is forgotten, the retry is new work.
	age("-1 millisecond")
	v, out3, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-1"}, fn)
	if err != nil || out3.Status != once.Ran || v.ChargeID != "r2" || out3.Claim == out.Claim {
		t.Fatalf("just after the window: %+v %+v %v; want a new operation", v, out3, err)
	}

	// The same with the real clock and a short window: long enough that the retry inside it
	// is inside it on a loaded machine; waited out by the database's clock.
	short := once.Forever{Name: "reports.Quick", Retain: 3 * time.Second}
	if _, _, err := once.ForeverValue(ctx, pool, short, once.Ref{Key: "ref-2"}, fn); err != nil {
		t.Fatal(err)
	}
	if _, o, err := once.ForeverValue(ctx, pool, short, once.Ref{Key: "ref-2"}, fn); err != nil || o.Status != once.Duplicate {
		t.Fatalf("inside a 3s window: %+v, %v; want Duplicate", o, err)
	}
	var left time.Duration
	if err := pool.QueryRow(ctx, `SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1e6)::bigint FROM once.operations WHERE key = 'ref-2'`).
		Scan((*int64)(&left)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(left*time.Microsecond + 100*time.Millisecond)
	if _, o, err := once.ForeverValue(ctx, pool, short, once.Ref{Key: "ref-2"}, fn); err != nil || o.Status != once.Ran {
		t.Fatalf("after a 3s window: %+v, %v; want Ran", o, err)
	}
}

func TestReapExpired_DeletesInBatchesAndKeepsTheLedger(t *testing.T) {
	t.Parallel()
	pool, tracer := setupTraced(t)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Generate", Retain: time.Hour}
	for i := range 30 {
		_, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-" + strconv.Itoa(i)}, func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			return i, a.Record(once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// 25 of the 30 have passed their window; all were claimed two days ago (the reaper deletes
	// only rows of days rolled up).
	if _, err := pool.Exec(ctx, `UPDATE once.operations SET claimed_at = claimed_at - interval '2 days'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE once.operations SET expires_at = clock_timestamp() - interval '1 second'
WHERE id IN (SELECT id FROM once.operations ORDER BY id LIMIT 25)`); err != nil {
		t.Fatal(err)
	}
	tracer.take()
	n, err := onceops.ReapExpired(ctx, pool, 10)
	if err != nil || n != 25 {
		t.Fatalf("ReapExpired = %d, %v; want 25", n, err)
	}
	// The roll-up the reaper runs first: the statement that finds the days, and one for each
	// of the two days since the claims' (one of them, if the second ended less than
	// RollUpMargin ago); then three deletes.
	trips, _ := tracer.take()
	if trips != 6 && trips != 5 {
		t.Fatalf("%d statements to reap 25 in batches of 10, want 6 (the roll-up's 3 and 3 deletes), or 5 within the roll-up's margin past midnight", trips)
	}
	var left, ledger int
	pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM once.operations), (SELECT count(*) FROM once.ledger)").Scan(&left, &ledger)
	if left != 5 || ledger != 30 {
		t.Fatalf("%d operations and %d ledger entries left, want 5 and 30", left, ledger)
	}
}

func TestForever_BadInputIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var nilPool *pgxpool.Pool
	ok := func(context.Context) (int, error) { t.Error("function ran on bad input"); return 0, nil }
	cases := []struct {
		name string
		call func() error
	}{
		{"empty name", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{}, once.Ref{Key: "k"}, ok)
			return err
		}},
		{"empty key", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "g"}, once.Ref{Key: ""}, ok)
			return err
		}},
		{"key too long", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "g"}, once.Ref{Key: strings.Repeat("k", once.MaxKeyLen+1)}, ok)
			return err
		}},
		{"scope not UTF-8", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "g"}, once.Ref{Scope: "\xff", Key: "k"}, ok)
			return err
		}},
		{"nil DB", func() error {
			_, _, err := once.ForeverValue(ctx, nil, once.Forever{Name: "g"}, once.Ref{Key: "k"}, ok)
			return err
		}},
		{"typed nil DB", func() error {
			_, _, err := once.ForeverValue(ctx, nilPool, once.Forever{Name: "g"}, once.Ref{Key: "k"}, ok)
			return err
		}},
		{"nil function", func() error { _, err := once.Forever{Name: "g"}.Do(ctx, pool, once.Ref{Key: "k"}, nil); return err }},
		{"nil value function", func() error {
			_, _, err := once.ForeverValue[int](ctx, pool, once.Forever{Name: "g"}, once.Ref{Key: "k"}, nil)
			return err
		}},
		{"negative retain", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "g", Retain: -1}, once.Ref{Key: "k"}, ok)
			return err
		}},
		{"negative stale", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "g", Stale: -1}, once.Ref{Key: "k"}, ok)
			return err
		}},
		{"negative max result", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "g", MaxResult: -1}, once.Ref{Key: "k"}, ok)
			return err
		}},
		{"input not encodable", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "g"}, once.Ref{Key: "k", Input: make(chan int)}, ok)
			return err
		}},
		{"result not encodable", func() error {
			_, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "g"}, once.Ref{Key: "k"}, func(context.Context) (chan int, error) {
				t.Error("function ran on bad input")
				return nil, nil
			})
			return err
		}},
		{"cancelled context", func() error {
			_, _, err := once.ForeverValue(cancelled, pool, once.Forever{Name: "g"}, once.Ref{Key: "k"}, ok)
			return err
		}},
		{"scope too long", func() error {
			_, err := once.Forever{Name: "g"}.Do(ctx, pool, once.Ref{Scope: strings.Repeat("s", once.MaxKeyLen+1), Key: "k"}, func(context.Context) error { return nil })
			return err
		}},
		{"negative wait", func() error {
			_, err := once.Forever{Name: "g", Wait: -1}.Do(ctx, pool, once.Ref{Key: "k"}, func(context.Context) error { return nil })
			return err
		}},
		{"reaper negative batch", func() error { _, err := onceops.ReapExpired(ctx, pool, -1); return err }},
		{"drain without functions", func() error { _, err := onceops.Drain{}.Run(ctx, pool); return err }},
		{"ledger entry without unit", func() error {
			_, err := onceops.RecordLedger(ctx, pool, onceops.Operation{ID: "00000000-0000-4000-8000-000000000000", Name: "g", Key: "k"}, once.LedgerEntry{Kind: "usage"})
			return err
		}},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, once.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", c.name, err)
		}
	}
	if n := operationTables(t, pool); n != 0 {
		t.Fatalf("%d rows written by refused calls, want 0", n)
	}
}

func TestForever_RoundTrips(t *testing.T) {
	t.Parallel()
	pool, tracer := setupTraced(t)
	ctx := context.Background()
	// A name of its own: the choice to read first follows each guard name's recent claims in
	// this process, and other tests' guards must not move it.
	g := once.Forever{Name: "roundtrips.Charge"}
	fn := func(context.Context) (receipt, error) { return receipt{ChargeID: "ch"}, nil }
	// Warm the connection's statement cache: pgx prepares each statement on first use.
	once.SetDuplicateShare(g.Name, 1)
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "warm"}, fn)
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "warm"}, fn)
	once.SetDuplicateShare(g.Name, 0)
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "warm-2"}, fn)
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "warm-2"}, fn)
	step := func(what, key string, db once.DB, want once.Status, wantTrips, wantStmts int64) {
		t.Helper()
		if _, out, err := once.ForeverValue(ctx, db, g, once.Ref{Key: key}, fn); err != nil || out.Status != want {
			t.Fatalf("%s: %+v %v, want %v", what, out, err, want)
		}
		if trips, stmts := tracer.take(); trips != wantTrips || stmts != wantStmts {
			t.Fatalf("%s: %d round trips, %d statements; want %d and %d", what, trips, stmts, wantTrips, wantStmts)
		}
	}

	// A guard meeting duplicates reads each key's row first: a duplicate is one read, and a
	// new key costs that read before its claim.
	once.SetDuplicateShare(g.Name, 1)
	tracer.take()
	step("fresh, reading first (the read that finds no row, the claim, the settle)", "fresh", pool, once.Ran, 3, 3)
	step("replay, reading first (one read)", "fresh", pool, once.Duplicate, 1, 1)

	// A guard whose keys are new sends the claim alone; its duplicate reads after.
	once.SetDuplicateShare(g.Name, 0)
	step("fresh, claim alone (claim, settle)", "fresh-2", pool, once.Ran, 2, 2)
	step("replay after a claim alone (claim, then read)", "fresh-2", pool, once.Duplicate, 2, 2)
	// That duplicate, and one more, turn reading first on.
	step("second duplicate, still claiming first", "fresh-2", pool, once.Duplicate, 2, 2)
	step("third duplicate, reading first", "fresh-2", pool, once.Duplicate, 1, 1)
	// Sixteen new keys in a row turn it off again.
	for i := range 16 {
		once.ForeverValue(ctx, pool, g, once.Ref{Key: "new-" + strconv.Itoa(i)}, fn)
	}
	tracer.take()
	step("fresh after sixteen new keys", "fresh-3", pool, once.Ran, 2, 2)
}

func TestForever_OversizedResultIsRecordedDoneWithoutIt(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Render", MaxResult: 100}
	runs := 0
	big := func(context.Context) (string, error) { runs++; return strings.Repeat("x", 200), nil }
	v, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "r1"}, big)
	if !errors.Is(err, once.ErrResultTooLarge) || out.Status != once.Ran || len(v) != 200 {
		t.Fatalf("first call: %d bytes, %+v, %v; want the value and ErrResultTooLarge", len(v), out, err)
	}
	if !strings.Contains(err.Error(), "202 bytes is over the 100-byte limit") {
		t.Fatalf("error does not say the sizes: %v", err)
	}
	if _, out2, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "r1"}, big); !errors.Is(err, once.ErrResultTooLarge) || out2.Status != once.Duplicate {
		t.Fatalf("repeat: %+v, %v; want Duplicate with ErrResultTooLarge", out2, err)
	}
	if runs != 1 {
		t.Fatalf("%d runs, want 1: the effect happened, it must not happen again", runs)
	}
	if r := operationState(t, pool, out.Claim); r.state != "done" {
		t.Fatalf("operation %+v, want done", r)
	}
}

func TestForever_PanicLeavesNoOpenClaim(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	for _, c := range []struct {
		repeatSafe bool
		want       string
	}{{false, "uncertain"}, {true, "released"}} {
		g := once.Forever{Name: "g", RepeatSafe: c.repeatSafe}
		key := "k-" + strconv.FormatBool(c.repeatSafe)
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic did not go on")
				}
			}()
			once.ForeverValue(ctx, pool, g, once.Ref{Key: key}, func(context.Context) (int, error) { panic("boom") })
		}()
		rec, err := onceops.Lookup(ctx, pool, "g", "", key)
		if err != nil || rec.State != c.want {
			t.Errorf("RepeatSafe=%v: after a panic %+v, %v; want %s", c.repeatSafe, rec, err, c.want)
		}
	}
}

func TestForever_InsideTheCallersTransaction(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "g"}
	fn := func(ctx context.Context) (int, error) { return 7, nil }
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, out, err := once.ForeverValue(ctx, tx, g, once.Ref{Key: "k"}, fn); err != nil || out.Status != once.Ran {
		t.Fatal(out, err)
	}
	tx.Rollback(ctx)
	// The claim rolled back with the caller's work: the key was never used.
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "k"}, fn); err != nil || out.Status != once.Ran {
		t.Fatalf("after the caller's rollback: %+v, %v; want Ran", out, err)
	}
}

func TestForever_HolderMarkedUncertainForSilenceCanStillSettle(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "g", Stale: 100 * time.Millisecond, NoHeartbeat: true} // a holder that cannot show life
	_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "k"}, func(ctx context.Context) (int, error) {
		time.Sleep(300 * time.Millisecond) // silent for longer than Stale
		o, err := g.Do(ctx, pool, once.Ref{Key: "k"}, func(context.Context) error { return nil })
		if !errors.Is(err, once.ErrUncertain) || o.Status != once.Duplicate {
			t.Errorf("a second caller after the silence: %+v, %v; want ErrUncertain", o, err)
		}
		return 42, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := operationState(t, pool, out.Claim); r.state != "done" || r.errText != "" {
		t.Fatalf("operation %+v, want done with no note: the holder came back with the outcome", r)
	}
	var uncertainSince, form *string
	if err := pool.QueryRow(ctx, `SELECT uncertain_since::text, result_form FROM once.operations WHERE id = $1::uuid`, out.Claim).Scan(&uncertainSince, &form); err != nil {
		t.Fatal(err)
	}
	if uncertainSince != nil || form != nil {
		t.Fatalf("uncertain_since %v, result_form %v after the settle; want both NULL (a plain value, no longer uncertain)", uncertainSince, form)
	}
	if v, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "k"}, func(context.Context) (int, error) { return 0, nil }); v != 42 || err != nil {
		t.Fatalf("replay %d, %v; want 42", v, err)
	}
}

// deadClaim leaves an open claim on key whose holder last showed life an hour ago, as a
// process killed mid-effect leaves it (the crash tests kill a real one).
func deadClaim(t *testing.T, db once.DB, name, key string) {
	t.Helper()
	_, err := db.Exec(context.Background(), `INSERT INTO once.operations (name, scope, key, id, token, claimed_at, alive_at)
VALUES ($1, '', $2, gen_random_uuid(), 'dead-holder', clock_timestamp() - interval '1 hour', clock_timestamp() - interval '1 hour')`, name, key)
	if err != nil {
		t.Fatal(err)
	}
}

// Many callers meet one dead holder's claim at once: with RepeatSafe exactly one takes it
// over and runs; without it, none runs and the claim is marked uncertain once.
func TestForever_ConcurrentCallersMeetingADeadHolder(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	for _, repeatSafe := range []bool{true, false} {
		g := once.Forever{Name: "billing.Charge", Stale: time.Minute, RepeatSafe: repeatSafe}
		key := "order/" + strconv.FormatBool(repeatSafe)
		deadClaim(t, pool, g.Name, key)
		var ran, inFlight, uncertain atomic.Int64
		allAnswered := make(chan struct{})
		storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
			_, out, err := once.ForeverValue(ctx, conn, g, once.Ref{Key: key}, func(ctx context.Context) (int, error) {
				// Hold the new claim until every other caller has met it.
				select {
				case <-allAnswered:
				case <-time.After(20 * time.Second):
				}
				return caller, effect(ctx, conn, "forever", key, caller)
			})
			switch {
			case out.Status == once.Ran:
				ran.Add(1)
			case err == nil && out.Status == once.InFlight:
				if inFlight.Add(1) == stormSize-1 {
					close(allAnswered)
				}
			case errors.Is(err, once.ErrUncertain):
				uncertain.Add(1)
			default:
				return err
			}
			return nil
		})
		rec, err := onceops.Lookup(context.Background(), pool, g.Name, "", key)
		if err != nil {
			t.Fatal(err)
		}
		n := effects(t, pool, "forever", key)
		if repeatSafe && (ran.Load() != 1 || inFlight.Load() != stormSize-1 || n != 1 || rec.State != "done" || rec.Attempts != 2) {
			t.Errorf("repeat-safe: %d ran, %d in flight, %d effects, %+v; want one takeover that ran once, the others in flight", ran.Load(), inFlight.Load(), n, rec)
		}
		if !repeatSafe && (ran.Load() != 0 || n != 0 || uncertain.Load() != stormSize || rec.State != "uncertain" || rec.Attempts != 1) {
			t.Errorf("not repeat-safe: %d ran, %d uncertain, %d effects, %+v; want none run, all told uncertain", ran.Load(), uncertain.Load(), n, rec)
		}
	}
}

// A forever guard's settle is a HOT update: no index reads what it changes, and the page has
// room for the new version, so it writes no index entry. The negative control puts back the
// index the schema had before (uncertain operations by state and settled_at), and the same
// settle is no longer HOT.
func TestForever_SettleIsAHOTUpdate(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	settle := func(key string) (updates, hot int64) {
		t.Helper()
		// A connection of its own: a backend's counts of earlier transactions may not have
		// been flushed yet, and would add to this one's.
		conn, err := pgx.Connect(ctx, pool.Config().ConnString())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, out, err := once.ForeverValue(ctx, tx, g, once.Ref{Key: key}, func(context.Context) (receipt, error) { return receipt{ChargeID: "ch"}, nil }); err != nil || out.Status != once.Ran {
			t.Fatalf("Do: %+v, %v", out, err)
		}
		// The transaction's own counts: exact, and visible before it commits.
		if err := tx.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables
WHERE schemaname = 'once' AND relname = 'operations'`).Scan(&updates, &hot); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return updates, hot
	}
	if updates, hot := settle("order/1"); updates != 1 || hot != 1 {
		t.Errorf("the settle: %d updates, %d of them HOT; want 1 HOT update", updates, hot)
	}
	if _, err := pool.Exec(ctx, "CREATE INDEX operations_attention ON once.operations (name, settled_at) WHERE state = 'uncertain'"); err != nil {
		t.Fatal(err)
	}
	if updates, hot := settle("order/2"); updates != 1 || hot != 0 {
		t.Errorf("with an index on state and settled_at: %d updates, %d of them HOT; want 1 update that is not HOT (the difference this test must be able to see)", updates, hot)
	}
}
