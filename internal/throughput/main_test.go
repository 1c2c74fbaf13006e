package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
)

// TestRun_SmokeAllScenariosExact runs every scenario with tiny counts on a cluster with
// default durability and checks that each final state is exact and each row is reported:
// the benchmark keeps working even though its full run is too long for the test suite.
//
// A naive scenario runs beside them as the negative control of the final-state check: it
// reads, then inserts into a table with no constraint, and the first callers of each storm
// are held between the two until all have read. Its storms must be reported as not exact.
func TestRun_SmokeAllScenariosExact(t *testing.T) {
	url := os.Getenv(pgtest.EnvURL)
	if url == "" {
		srv, err := pgtest.StartServer(true)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		defer srv.Stop()
		url = srv.URL()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := Config{Keys: 40, Storm: 30, Rounds: 2, Workers: 4, Conns: 4, Cap: 5}
	naive := naiveScenario(cfg.Workers)
	r, err := run(ctx, url, cfg, append(newScenarios(cfg), naive), testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r.Print(&out)
	t.Log("\n" + out.String())
	if r.Exact() || len(naive.problems) != cfg.Rounds {
		t.Errorf("the naive check-then-insert: problems %q; want one per storm, and the report not exact", naive.problems)
	}
	for _, s := range r.rows {
		if s != naive && len(s.problems) > 0 {
			t.Errorf("%s: %s", s.name, strings.Join(s.problems, "; "))
		}
		if s.fresh.calls != int64(cfg.Keys) || s.storm.calls != int64(cfg.Storm*cfg.Rounds) {
			t.Errorf("%s: %d fresh calls and %d storm calls, want %d and %d", s.name, s.fresh.calls, s.storm.calls, cfg.Keys, cfg.Storm*cfg.Rounds)
		}
		if s.fresh.trips == 0 || s.fresh.walBytes == 0 {
			t.Errorf("%s: %d round trips and %d WAL bytes on fresh keys: the meters saw nothing", s.name, s.fresh.trips, s.fresh.walBytes)
		}
		if !strings.Contains(out.String(), "| "+s.name+" |") && !strings.Contains(out.String(), "↳ "+s.name+" |") {
			t.Errorf("%s: not in the report", s.name)
		}
	}
}

// naiveScenario reads, then inserts with nothing to stop a second insert; the first workers
// callers of a storm wait after their read until all of them have read.
func naiveScenario(workers int) *scenario {
	s := &scenario{name: "naive: SELECT, then INSERT", kind: "naive"}
	var mu sync.Mutex
	gates := map[string]*sync.WaitGroup{}
	s.setup = func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS naive (key text NOT NULL)")
		return err
	}
	s.call = func(ctx context.Context, key string) (bool, error) {
		var n int
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM naive WHERE key = $1", key).Scan(&n); err != nil {
			return false, err
		}
		if strings.HasPrefix(key, "storm-") {
			mu.Lock()
			gate, ok := gates[key]
			if !ok {
				gate = &sync.WaitGroup{}
				gate.Add(workers)
				gates[key] = gate
			}
			hold := n == 0
			mu.Unlock()
			if hold {
				gate.Done()
				gate.Wait()
			}
		}
		if n > 0 {
			return false, nil
		}
		_, err := s.pool.Exec(ctx, "INSERT INTO naive (key) VALUES ($1)", key)
		return err == nil, err
	}
	s.freshState = func(ctx context.Context, db *pgxpool.Pool, keys int) error {
		return countIs(ctx, db, int64(keys), "rows", "SELECT count(*) FROM naive WHERE key LIKE 'f-%'")
	}
	s.stormState = func(ctx context.Context, db *pgxpool.Pool, key string, effects int64) error {
		return both(func() error { return wantEffects(effects, 1) },
			func() error { return countIs(ctx, db, 1, "rows", "SELECT count(*) FROM naive WHERE key = $1", key) })
	}
	return s
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
