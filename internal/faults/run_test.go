package faults

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/internal/pgtest"
)

// seedAndDuration reads FAULTS_SEED and FAULTS_DURATION (make faults sets them), or gives
// the short run's: a fixed seed, so CI replays the same schedule, and 20 seconds.
func seedAndDuration(t *testing.T, short time.Duration) (int64, time.Duration) {
	seed := int64(20261206)
	if s := os.Getenv("FAULTS_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("FAULTS_SEED=%q: not an integer", s)
		}
		seed = n
	}
	d := short
	if s := os.Getenv("FAULTS_DURATION"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("FAULTS_DURATION=%q: %v", s, err)
		}
		d = v
	}
	return seed, d
}

func report(t *testing.T, name string, seed int64, d time.Duration, res *Result) {
	calls, effects, faults := res.History.Counts()
	t.Logf("seed %d, faults for %s\ncalls:\n%seffects:\n%sfaults injected:\n%skeys left holding after recovery (documented, bounded by a refund, a rearm or an operator):\n%stime to recover after the last fault: %s",
		seed, d, FormatCounts(calls), FormatCounts(effects), FormatCounts(faults), FormatCounts(res.LeftOpen), res.Recovery.Round(time.Millisecond))
	if len(res.Violations) > 0 {
		var b strings.Builder
		for _, v := range res.Violations {
			b.WriteString(v.String())
		}
		t.Fatalf("%d violations; replay with: make faults SEED=%d DURATION=%s RUN=%s\n%s", len(res.Violations), seed, d, name, b.String())
	}
}

// The seeded run against a server of its own, which the schedule may kill -9 and restart:
// every kind's workload under every fault, then the checker.
func TestFaults(t *testing.T) {
	seed, d := seedAndDuration(t, 20*time.Second)
	// synchronous_commit stays on: a crash must lose no commit the server acknowledged.
	srv, err := pgtest.StartServerWith(false, "synchronous_commit=on")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	res, err := Run(ctx, Config{Seed: seed, Duration: d, URL: srv.URL(), DirectURL: srv.URL(), Server: srv})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	report(t, "TestFaults", seed, d, res)
}

// The same run through PgBouncer in transaction mode (pgx in exec mode): the proxy sits
// between pgx and the pooler. The server is the test binary's own, so it is not killed.
func TestFaults_Pooler(t *testing.T) {
	seed, d := seedAndDuration(t, 20*time.Second)
	db := pgtest.NewPooledDatabase(t, "exec")
	res, err := Run(context.Background(), Config{Seed: seed, Duration: d, URL: db.URL, DirectURL: db.DirectURL})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	report(t, "TestFaults_Pooler", seed, d, res)
}
