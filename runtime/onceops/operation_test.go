package onceops_test

import (
	"context"
	"errors"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

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
		resolve func(id string) error
		state   string
	}{
		{"done", time.Hour, func(id string) error { return onceops.ResolveDone(ctx, pool, id, 7) }, "done"},
		{"failed", 2 * time.Hour, func(id string) error { return onceops.ResolveFailed(ctx, pool, id, "declined") }, "failed"},
		{"retry", 3 * time.Hour, func(id string) error { return onceops.ResolveRetry(ctx, pool, id) }, "released"},
		{"for ever", 0, func(id string) error { return onceops.ResolveDone(ctx, pool, id, 7) }, "done"},
	} {
		g := once.Forever{Name: "billing.Charge", Retain: c.retain}
		_, out, _ := once.ForeverValue(ctx, pool, g, once.Ref{Key: c.name}, lost)
		if err := c.resolve(out.Claim); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rec, err := onceops.Lookup(ctx, pool, g.Name, "", c.name)
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
	g := once.Forever{Name: "billing.Charge", Retain: time.Hour}
	if v, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "done"}, func(context.Context) (int, error) { return 8, nil }); err != nil || out.Status != once.Ran || v != 8 {
		t.Fatalf("after the resolution expired: %d %+v %v, want a new run", v, out, err)
	}
}
