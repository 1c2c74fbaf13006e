package once_test

import (
	"context"
	"strconv"
	"testing"

	once "github.com/oncekit/once/runtime"
)

// BenchmarkForeverWAL reports the write-ahead log a forever guard's fresh key writes: the
// claim's (insert and commit), the settle's (update and commit) and the whole Do's, in bytes
// per call, read as pg_current_wal_insert_lsn() before the claim, inside the function (after the
// claim committed) and after the settle. A CHECKPOINT first puts every run on the same
// footing: the first change of each page after it writes the whole page. Run it alone (no
// other test writes to the cluster meanwhile):
//
//	go test -bench 'ForeverWAL' -run '^$' -benchtime 500x ./runtime/
func BenchmarkForeverWAL(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	lsn := func() int64 {
		var n int64
		if err := pool.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		name string
		g    once.Forever
	}{{"for-ever", once.Forever{Name: "wal.Charge"}}, {"retain", once.Forever{Name: "wal.ChargeRetained", Retain: 24 * 3600e9}}} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := pool.Exec(ctx, "CHECKPOINT"); err != nil {
				b.Fatal(err)
			}
			var claim, settle int64
			round := strconv.Itoa(b.N) + "/" // the framework calls this more than once: keys stay new
			b.ResetTimer()
			for i := range b.N {
				before := lsn()
				var claimed int64
				_, _, err := once.ForeverValue(ctx, pool, c.g, once.Ref{Key: round + strconv.Itoa(i)}, func(context.Context) (receipt, error) {
					claimed = lsn()
					return receipt{ChargeID: "ch_" + strconv.Itoa(i), Amount: 500}, nil
				})
				if err != nil {
					b.Fatal(err)
				}
				after := lsn()
				claim += claimed - before
				settle += after - claimed
			}
			b.ReportMetric(float64(claim)/float64(b.N), "claim-WAL-B/op")
			b.ReportMetric(float64(settle)/float64(b.N), "settle-WAL-B/op")
			b.ReportMetric(float64(claim+settle)/float64(b.N), "do-WAL-B/op")
		})
	}
}
