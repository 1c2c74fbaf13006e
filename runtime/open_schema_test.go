package once_test

import (
	"context"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
)

// openClaimsAliveStep is the schema step that gave open claims their own window and last
// sign of life.
func openClaimsAliveStep(t *testing.T) once.SchemaStep {
	t.Helper()
	for _, s := range once.SchemaSteps() {
		if s.Name == "open_claims_alive" {
			return s
		}
	}
	t.Fatal("no schema step open_claims_alive")
	return once.SchemaStep{}
}

// The down of open_claims_alive drops its two columns (squawk-ignore ban-drop-column): the
// reason it gives holds. Every claim stays, with its state; and a claim without the columns
// (as one made by the runtime before the step) is judged, after the up again, as that
// runtime judged it: by the finder's window from its opening.
func TestOpenClaimsAlive_DownKeepsEveryClaimAndUpJudgesOldClaimsAsBefore(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	step := openClaimsAliveStep(t)
	g := once.Open[int]{Name: "research.StartRun", Stale: time.Minute}
	open, _, err := g.Claim(ctx, pool, "open")
	if err != nil {
		t.Fatal(err)
	}
	done, _, err := g.Claim(ctx, pool, "done")
	if err != nil {
		t.Fatal(err)
	}
	if err := done.Finish(ctx, pool); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		t.Helper()
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM once.open_claims WHERE (id, state) IN (($1, 'open'), ($2, 'done'))", open.ID, done.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := pool.Exec(ctx, "BEGIN; "+step.Down+step.UnrecordSQL()+" COMMIT;"); err != nil {
		t.Fatalf("down: %v", err)
	}
	var columns int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'once' AND table_name = 'open_claims' AND column_name IN ('stale_after', 'alive_at')").Scan(&columns); err != nil || columns != 0 {
		t.Fatalf("after the down: %d of the step's columns (%v), want none", columns, err)
	}
	if n := count(); n != 2 {
		t.Fatalf("after the down: %d of the 2 claims with their states", n)
	}
	// A claim as the runtime before the step makes it.
	var old int64
	if err := pool.QueryRow(ctx, "INSERT INTO once.open_claims (name, key, token) VALUES ($1, 'old', 'tok') RETURNING id", g.Name).Scan(&old); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "BEGIN; "+step.Up+step.RecordSQL()+" COMMIT;"); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if n := count(); n != 2 {
		t.Fatalf("after the up: %d of the 2 claims with their states", n)
	}
	if _, out, err := g.Claim(ctx, pool, "old"); err != nil || out.Status != once.InFlight || out.ID != old {
		t.Fatalf("an old claim within the finder's window: %+v, %v; want in flight at %d", out, err, old)
	}
	backdate(t, pool, old, 2*time.Minute)
	if c, out, err := g.Claim(ctx, pool, "old"); err != nil || c == nil || out.Status != once.Ran {
		t.Fatalf("an old claim past the finder's window: %+v, %v; want it closed and the key claimed", out, err)
	}
	if s := claimState(t, pool, old); s.state != "stale" {
		t.Fatalf("the old claim is %q, want stale", s.state)
	}
}
