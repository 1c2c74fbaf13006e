package once_test

import (
	"context"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
)

// Schema step 3 moves the units counted in once.counters into slots, and its down (and the
// down asked for by name, which drops the slots' table) moves them back: no unit is lost
// either way, which is the reason its squawk-ignore comments give for dropping what they drop.
func TestSchemaStep3_UnitsMoveIntoSlotsAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	steps := once.SchemaSteps()
	if len(steps) < 3 || steps[2].Name != "counter_slots_latch_token" {
		t.Fatalf("step 3 is %+v", steps[2])
	}
	step := steps[2]
	for _, down := range []struct{ name, sql string }{{"down", step.Down}, {"drop", step.DropData}} {
		t.Run(down.name, func(t *testing.T) {
			pool := pgtest.NewDatabase(t).Pool(t, 2)
			exec(t, pool, steps[0].Up)
			exec(t, pool, steps[1].Up)
			// What a runtime before step 3 left: 3 units of a cap of 5, a fired latch.
			exec(t, pool, "INSERT INTO once.counters (name, key, used, cap) VALUES ('app.Quota', 'k1', 3, 5), ('app.Quota', 'k2', 0, 5)")
			exec(t, pool, "INSERT INTO once.latches (name, key, fired_at, firings) VALUES ('app.Alert', 'r1', now(), 1)")
			exec(t, pool, step.Up)
			for _, later := range steps[3:] { // what the runtime's statements need besides
				exec(t, pool, later.Up)
			}
			units := func(sql string) int64 {
				t.Helper()
				var n int64
				if err := pool.QueryRow(ctx, sql).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if s, c := units("SELECT count(*) FROM once.counter_slots WHERE key = 'k1'"), units("SELECT sum(used) FROM once.counters"); s != 3 || c != 0 {
				t.Fatalf("after the up: %d slots, %d counted in once.counters; want 3 and 0", s, c)
			}
			g := once.Statement[int]{Name: "app.Quota", Cap: 5}
			if used, ok, err := g.Reserve(ctx, pool, "k1", 2); err != nil || !ok || used != 5 {
				t.Fatalf("reserving the 2 units left: %d, %v, %v", used, ok, err)
			}
			if used, ok, err := g.Reserve(ctx, pool, "k1", 1); err != nil || ok || used != 5 {
				t.Fatalf("reserving past the cap: %d, %v, %v; want refused at 5", used, ok, err)
			}
			if _, ok, err := g.Reserve(ctx, pool, "k3", 1); err != nil || !ok {
				t.Fatalf("reserving a new key: %v, %v", ok, err)
			}
			e := once.Episode[int]{Name: "app.Alert"}
			if _, out, err := e.Do(ctx, pool, "r2", func(context.Context) (int, error) { return 0, nil }); err != nil || out.Status != once.Ran {
				t.Fatalf("firing r2: %+v, %v", out, err)
			}

			for i := len(steps) - 1; i >= 3; i-- {
				exec(t, pool, steps[i].Down)
			}
			exec(t, pool, down.sql)
			if k1, k3 := units("SELECT used FROM once.counters WHERE key = 'k1'"), units("SELECT used FROM once.counters WHERE key = 'k3'"); k1 != 5 || k3 != 1 {
				t.Fatalf("after the %s: once.counters holds %d and %d units, want 5 and 1", down.name, k1, k3)
			}
			if n := units("SELECT count(*) FROM once.latches WHERE fired_at IS NOT NULL"); n != 2 {
				t.Fatalf("after the %s: %d fired latches, want 2", down.name, n)
			}
			if n := units("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'once' AND table_name = 'latches' AND column_name = 'token'"); n != 0 {
				t.Fatalf("after the %s: once.latches still has its token column", down.name)
			}
			gone := units("SELECT count(*) FROM pg_tables WHERE schemaname = 'once' AND tablename = 'counter_slots'") == 0
			if gone != (down.name == "drop") {
				t.Fatalf("after the %s: once.counter_slots dropped: %v", down.name, gone)
			}
			if !gone {
				if n := units("SELECT count(*) FROM once.counter_slots"); n != 0 {
					t.Fatalf("after the down: %d slots left beside the units counted back", n)
				}
			}

			// Up again: the units move back into slots, none counted twice.
			exec(t, pool, step.Up)
			if s, c := units("SELECT count(*) FROM once.counter_slots"), units("SELECT sum(used) FROM once.counters"); s != 6 || c != 0 {
				t.Fatalf("up again: %d slots, %d in once.counters; want 6 and 0", s, c)
			}
		})
	}
}
