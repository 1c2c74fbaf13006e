package faults

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/oncekit/once/internal/pgtest"
)

// faultSchedule runs a short seeded run and returns the faults it injected, as recorded.
func faultSchedule(t *testing.T, seed int64) []string {
	t.Helper()
	db := pgtest.NewDatabase(t)
	res, err := Run(context.Background(), Config{Seed: seed, Duration: 4 * time.Second, URL: db.URL, DirectURL: db.DirectURL,
		Kinds: []string{"forever", "lease"}, Keys: 2, Callers: 4, Stale: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, _, faults, _ := res.History.Snapshot()
	out := make([]string, len(faults))
	for i, f := range faults {
		out[i] = f.Kind + ": " + f.Note
	}
	return out
}

// One seed is one schedule: two runs of a seed inject the same faults, with the same
// sizes, streams, latency seeds and timing; another seed injects others. The runs end on
// the clock, so one may fit a fault fewer than the other at its end.
func TestSchedule_SameSeedSameFaults(t *testing.T) {
	t.Parallel()
	type run struct {
		seed   int64
		faults []string
	}
	runs := []run{{seed: 7}, {seed: 7}, {seed: 8}}
	done := make(chan struct{}, len(runs))
	for i := range runs {
		go func() {
			defer func() { done <- struct{}{} }()
			runs[i].faults = faultSchedule(t, runs[i].seed)
		}()
	}
	for range runs {
		<-done
	}
	if t.Failed() {
		return
	}
	a, b, c := runs[0].faults, runs[1].faults, runs[2].faults
	if len(a) < 2 || len(b) < 2 {
		t.Fatalf("runs of 4 s injected %d and %d faults; too few to compare", len(a), len(b))
	}
	if d := len(a) - len(b); d < -1 || d > 1 {
		t.Errorf("seed 7 injected %d faults once and %d the other time", len(a), len(b))
	}
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			t.Errorf("seed 7's fault %d: %q in one run, %q in the other", i, a[i], b[i])
		}
	}
	same := 0
	for i := 0; i < min(len(a), len(c)); i++ {
		if a[i] == c[i] {
			same++
		}
	}
	if same == min(len(a), len(c)) {
		t.Errorf("seeds 7 and 8 injected the same faults: %q", a)
	}
	t.Logf("seed 7's schedule, twice:\n%q\n%q\nseed 8's:\n%q", a, b, c)
}

// The latency fault's jitter is the seed's: a connection's chunks meet the same delays in
// every run of a seed, and other delays under another seed.
func TestSeededLatency_DelaysFollowTheSeed(t *testing.T) {
	delays := func(seed int64) []time.Duration {
		tox := &seededLatency{Latency: 100, Jitter: 50, Seed: seed}
		var out []time.Duration
		for conn := 0; conn < 3; conn++ {
			r := tox.NewState().(*rand.Rand)
			for i := 0; i < 20; i++ {
				d := tox.delay(r)
				if d < 50*time.Millisecond || d >= 150*time.Millisecond {
					t.Fatalf("delay %s outside 100 ms ± 50 ms", d)
				}
				out = append(out, d)
			}
		}
		return out
	}
	a, b, c := delays(1), delays(1), delays(2)
	differ := false
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 1, delay %d: %s once and %s the other time", i, a[i], b[i])
		}
		differ = differ || a[i] != c[i]
	}
	if !differ {
		t.Fatal("seeds 1 and 2 drew the same delays")
	}
	if a[0] == a[20] && a[1] == a[21] {
		t.Fatal("two connections of one fault drew the same delays")
	}
}
