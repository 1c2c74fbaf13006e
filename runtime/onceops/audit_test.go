package onceops_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// uncertain makes an uncertain operation of billing.Charge on key and returns its id.
func uncertain(t *testing.T, pool *pgxpool.Pool, key string) string {
	t.Helper()
	lost := func(context.Context) (int, error) { return 0, once.Uncertain(errors.New("connection reset")) }
	_, out, _ := once.ForeverValue(context.Background(), pool, once.Forever{Name: "billing.Charge"}, once.Ref{Key: key}, lost)
	if out.Claim == "" {
		t.Fatalf("no uncertain operation made for %q: %+v", key, out)
	}
	return out.Claim
}

// lastAudit reads the newest audit row.
func lastAudit(t *testing.T, pool *pgxpool.Pool) (n int, e onceops.AuditEntry) {
	t.Helper()
	list, err := onceops.ListAudit(context.Background(), pool, "", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		return 0, e
	}
	return len(list), list[0]
}

// field reads a top-level field of a JSON snapshot.
func field(t *testing.T, snap []byte, name string) any {
	t.Helper()
	if snap == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(snap, &m); err != nil {
		t.Fatalf("snapshot %s: %v", snap, err)
	}
	return m[name]
}

// Each audited action changes its row and writes one audit row saying who, what, why, and
// the row before and after; the next guard call behaves by the change.
func TestAudit_EachActionWritesItsRowWithTheChange(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	a := onceops.Audit{Actor: "ana", Reason: "checked with the provider"}

	// resolve done: the key replays the operator's result.
	id := uncertain(t, pool, "inv-1")
	if err := a.ResolveDone(ctx, pool, id, 42); err != nil {
		t.Fatal(err)
	}
	n, e := lastAudit(t, pool)
	if n != 1 || e.Actor != "ana" || e.Action != "resolve done" || e.Target != "operation "+id || e.Reason != a.Reason ||
		field(t, e.Before, "state") != "uncertain" || field(t, e.After, "state") != "done" || field(t, e.Before, "token") != nil {
		t.Fatalf("audit after resolve: %d rows, %+v (before %s, after %s)", n, e, e.Before, e.After)
	}
	ran := 0
	v, out, err := once.ForeverValue(ctx, pool, once.Forever{Name: "billing.Charge"}, once.Ref{Key: "inv-1"}, func(context.Context) (int, error) { ran++; return 1, nil })
	if err != nil || ran != 0 || v != 42 || out.Status != once.Duplicate {
		t.Fatalf("after resolve done: %d %+v %v, ran %d; want the replayed 42", v, out, err, ran)
	}

	// resolve failed and retry.
	id2, id3 := uncertain(t, pool, "inv-2"), uncertain(t, pool, "inv-3")
	if err := a.ResolveFailed(ctx, pool, id2, "declined"); err != nil {
		t.Fatal(err)
	}
	if n, e = lastAudit(t, pool); n != 2 || field(t, e.After, "state") != "failed" {
		t.Fatalf("audit after resolve failed: %d %+v", n, e)
	}
	if err := a.ResolveRetry(ctx, pool, id3); err != nil {
		t.Fatal(err)
	}
	if n, e = lastAudit(t, pool); n != 3 || field(t, e.After, "state") != "released" {
		t.Fatalf("audit after resolve retry: %d %+v", n, e)
	}

	// rearm: the latch fires once more.
	ep := once.Episode{Name: "alerts.Down"}
	fire := func() once.Status {
		out, err := ep.Do(ctx, pool, "db-1", func(context.Context) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return out.Status
	}
	fire()
	if rearmed, err := a.Rearm(ctx, pool, ep.Name, "db-1"); err != nil || !rearmed {
		t.Fatalf("rearm: %v %v", rearmed, err)
	}
	if n, e = lastAudit(t, pool); n != 4 || e.Action != "rearm" || field(t, e.Before, "fired_at") == nil || field(t, e.After, "fired_at") != nil {
		t.Fatalf("audit after rearm: %d %+v (before %s, after %s)", n, e, e.Before, e.After)
	}
	if s1, s2 := fire(), fire(); s1 != once.Ran || s2 != once.Duplicate {
		t.Fatalf("after rearm: %v then %v, want one firing", s1, s2)
	}

	// refund and reset of an allowance used up.
	st := once.Statement{Name: "ai.Credits", Cap: 3}
	for range 3 {
		if _, err := st.Do(ctx, pool, "org-1", 1, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Refund(ctx, pool, st.Name, "org-1", 2); err != nil {
		t.Fatal(err)
	}
	if n, e = lastAudit(t, pool); n != 5 || field(t, e.Before, "used") != 3.0 || field(t, e.After, "used") != 1.0 {
		t.Fatalf("audit after refund: %d %+v (before %s, after %s)", n, e, e.Before, e.After)
	}
	if got, err := a.ResetAllowance(ctx, pool, st.Name, "org-1"); err != nil || got != 1 {
		t.Fatalf("reset: %d %v, want 1 unit given back", got, err)
	}
	if n, e = lastAudit(t, pool); n != 6 || field(t, e.After, "used") != 0.0 {
		t.Fatalf("audit after reset: %d %+v", n, e)
	}
	for i := range 3 {
		if out, err := st.Do(ctx, pool, "org-1", 1, func(context.Context) error { return nil }); err != nil || out.Status != once.Ran {
			t.Fatalf("reservation %d after reset: %+v %v", i, out, err)
		}
	}

	// force release of a held lease: the next caller takes it.
	ls := once.Lease{Name: "runs.Org", TTL: time.Hour}
	if _, out, err := ls.Acquire(ctx, pool, "org-1"); err != nil || out.Status != once.Ran {
		t.Fatalf("acquire: %+v %v", out, err)
	}
	if err := a.ForceRelease(ctx, pool, ls.Name, "org-1"); err != nil {
		t.Fatal(err)
	}
	if n, e = lastAudit(t, pool); n != 7 || field(t, e.Before, "released_at") != nil || field(t, e.After, "released_by") != "operator" || field(t, e.Before, "holder") != nil {
		t.Fatalf("audit after force release: %d %+v (after %s)", n, e, e.After)
	}
	if _, out, err := ls.Acquire(ctx, pool, "org-1"); err != nil || out.Status != once.Ran {
		t.Fatalf("acquire after force release: %+v %v", out, err)
	}

	// close an open claim: the key opens anew.
	op := once.Open{Name: "research.Run", Stale: time.Hour}
	c, _, err := op.Claim(ctx, pool, "org-1")
	if err != nil || c == nil {
		t.Fatalf("claim: %v %v", c, err)
	}
	if err := a.CloseClaim(ctx, pool, c.ID); err != nil {
		t.Fatal(err)
	}
	if n, e = lastAudit(t, pool); n != 8 || field(t, e.After, "state") != "stale" || !strings.Contains(field(t, e.After, "reason").(string), a.Reason) {
		t.Fatalf("audit after close: %d %+v (after %s)", n, e, e.After)
	}
	if c2, out, err := op.Claim(ctx, pool, "org-1"); err != nil || c2 == nil || out.Status != once.Ran {
		t.Fatalf("claim after close: %+v %v", out, err)
	}

	// revive a dead follow-up.
	var fid int64
	if err := pool.QueryRow(ctx, `INSERT INTO once.followups (operation_id, operation, scope, key, action, provider_key, state, attempts, last_error)
VALUES (gen_random_uuid(), 'billing.Charge', '', 'inv-9', 'email', 'pk', 'dead', 10, 'smtp down') RETURNING id`).Scan(&fid); err != nil {
		t.Fatal(err)
	}
	if err := a.ReviveFollowUp(ctx, pool, fid); err != nil {
		t.Fatal(err)
	}
	if n, e = lastAudit(t, pool); n != 9 || field(t, e.Before, "state") != "dead" || field(t, e.After, "state") != "pending" {
		t.Fatalf("audit after revive: %d %+v", n, e)
	}
}

// An action that is refused, or whose audit row cannot be written, changes nothing and
// leaves no row: the change and its record commit together or not at all.
func TestAudit_NoChangeWithoutItsRowAndNoRowWithoutAChange(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	id := uncertain(t, pool, "inv-1")
	state := func() string {
		rec, err := onceops.Lookup(ctx, pool, "billing.Charge", "", "inv-1")
		if err != nil {
			t.Fatal(err)
		}
		return rec.State
	}
	for _, a := range []onceops.Audit{{Actor: "", Reason: "why"}, {Actor: "ana", Reason: ""}} {
		if err := a.ResolveRetry(ctx, pool, id); !errors.Is(err, once.ErrInvalid) {
			t.Fatalf("%+v: %v, want ErrInvalid", a, err)
		}
	}
	a := onceops.Audit{Actor: "ana", Reason: "why"}
	if err := a.ResolveRetry(ctx, pool, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, onceops.ErrNoOperation) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := a.CloseClaim(ctx, pool, 12345); !errors.Is(err, onceops.ErrNoClaim) {
		t.Fatalf("unknown claim: %v", err)
	}
	if err := a.Refund(ctx, pool, "ai.Credits", "org-1", 1); !errors.Is(err, once.ErrInvalid) {
		t.Fatalf("refund of nothing: %v", err)
	}
	if n, _ := lastAudit(t, pool); n != 0 || state() != "uncertain" {
		t.Fatalf("after refused actions: %d audit rows, state %s", n, state())
	}
	// The audit's insert fails: the resolution is rolled back with it.
	if _, err := pool.Exec(ctx, `ALTER TABLE once.audit ADD CONSTRAINT refuse_all CHECK (actor = 'nobody') NOT VALID`); err != nil {
		t.Fatal(err)
	}
	if err := a.ResolveRetry(ctx, pool, id); err == nil || !strings.Contains(err.Error(), "audit row") {
		t.Fatalf("resolve with a failing audit: %v, want the audit's error", err)
	}
	if s := state(); s != "uncertain" {
		t.Fatalf("state %s after a resolution whose audit failed, want it still uncertain", s)
	}
}
