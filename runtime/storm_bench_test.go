package once_test

import (
	"context"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
)

// BenchmarkStorm measures the path a storm takes: many goroutines calling one key whose
// promise is already held, so every call is answered without running (a replay, an open
// claim in flight, a set latch, a full cap, a held lease). It is the path that must stay
// free of writes and of row locks; the number is a time per answered call, all callers
// together (b.RunParallel, 4 goroutines per CPU on a pool of their own connections).
//
//	go test -bench 'Storm' -run '^$' -benchtime 3000x -count 5 ./runtime/
//
// What counting an answered call costs it (duplicates.go) is BenchmarkCountAnswered's.
func BenchmarkStorm(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	run := func(context.Context) error { return nil }
	never := func(context.Context) error { b.Error("a storm call ran its function"); return nil }

	forever := once.Forever{Name: "storm.Charge"}
	if _, err := forever.Do(ctx, pool, once.Ref{Key: "k"}, run); err != nil {
		b.Fatal(err)
	}
	open := once.Open{Name: "storm.Research"}
	if _, _, err := open.Claim(ctx, pool, "k"); err != nil {
		b.Fatal(err)
	}
	episode := once.Episode{Name: "storm.Alert"}
	if _, err := episode.Do(ctx, pool, "k", run); err != nil {
		b.Fatal(err)
	}
	statement := once.Statement{Name: "storm.Generate", Cap: 1}
	if _, err := statement.Do(ctx, pool, "k", 1, run); err != nil {
		b.Fatal(err)
	}
	lease := once.Lease{Name: "storm.Leader", TTL: time.Hour}
	if _, _, err := lease.Acquire(ctx, pool, "k"); err != nil {
		b.Fatal(err)
	}
	kinds := []struct {
		name string
		call func() (once.Outcome, error)
		want once.Status
	}{
		{"forever", func() (once.Outcome, error) { return forever.Do(ctx, pool, once.Ref{Key: "k"}, never) }, once.Duplicate},
		{"open", func() (once.Outcome, error) { return open.Do(ctx, pool, "k", never) }, once.InFlight},
		{"episode", func() (once.Outcome, error) { return episode.Do(ctx, pool, "k", never) }, once.Duplicate},
		{"statement", func() (once.Outcome, error) { return statement.Do(ctx, pool, "k", 1, never) }, once.Refused},
		{"lease", func() (once.Outcome, error) { return lease.Do(ctx, pool, "k", never) }, once.Busy},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			b.SetParallelism(benchParallelism)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					out, err := k.call()
					if err != nil || out.Status != k.want {
						b.Errorf("%v, %v; want %v", out.Status, err, k.want)
						return
					}
				}
			})
		})
	}
}
