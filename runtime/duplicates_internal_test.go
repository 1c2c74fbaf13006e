package once

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// BenchmarkCountAnswered is what counting adds to a call answered without running: the
// count in memory, from many goroutines at once on one guard of one pool, as in a storm.
// Next to a storm call's round trip (tens of microseconds and more, BenchmarkStorm) it is
// the whole difference counting makes to the call.
//
//	go test -bench CountAnswered -run '^$' ./runtime/
func BenchmarkCountAnswered(b *testing.B) {
	pool := new(pgxpool.Pool) // never used: the timer is disarmed below before it could fire
	t := tallyOf(pool)
	b.Cleanup(func() { tallies.Delete(pool) })
	t.mu.Lock()
	t.armed = true // no timed write: the pool is not connected
	t.mu.Unlock()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			countAnswered(pool, "forever", "bench.Charge", Duplicate)
		}
	})
	b.StopTimer()
	if _, n := t.take(); n != int64(b.N) {
		b.Fatalf("counted %d of %d calls", n, b.N)
	}
}
