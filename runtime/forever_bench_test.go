package once_test

import (
	"context"
	"encoding/json"
	"testing"

	once "github.com/oncekit/once/runtime"
)

// BenchmarkForever compares a forever guard with the bare statements it consists of, in one
// run (see compare): a fresh key (the claim, then the settle) and a replay (the claim that
// conflicts, then the read of the recorded result). The guard pipelines a duplicate's read
// with its claim, so a replay is one round trip where the bare pair is two; on a fresh key
// the pipelined read is the guard's extra cost, measured against the unpipelined form too.
//
//	go test -bench Forever -run '^$' -benchtime 2000x ./runtime/
func BenchmarkForever(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	result := receipt{ChargeID: "ch_1", Amount: 500}
	enc, _ := json.Marshal(result)
	fn := func(context.Context) (receipt, error) { return result, nil }
	g := once.Forever[receipt]{Name: "bench.Charge"}

	// bare: the claim's INSERT and the settle's UPDATE, as the guard sends them.
	// Each comparison has its own name, so their keys never meet.
	bareFresh := func(name string) benchOp {
		return func(b *testing.B, keys *benchKeys) func() error {
			return func() error {
				var id int64
				var ref string
				if err := pool.QueryRow(ctx, once.ForeverClaimSQL, name, "", keys.next(), "token", nil).Scan(&id, &ref); err != nil {
					return err
				}
				_, err := pool.Exec(ctx, once.ForeverSettleSQL, id, "token", "done", enc, nil, nil)
				return err
			}
		}
	}
	guardFresh := func(db once.DB, g once.Forever[receipt]) benchOp {
		return func(b *testing.B, keys *benchKeys) func() error {
			return func() error { _, _, err := g.Do(ctx, db, keys.next(), fn); return err }
		}
	}
	b.Run("fresh", func(b *testing.B) {
		compare(b, [2]string{"bare", "guard"}, [2]benchOp{bareFresh("bench.Bare"), guardFresh(pool, g)})
	})
	b.Run("fresh-unpipelined", func(b *testing.B) {
		compare(b, [2]string{"bare", "guard"},
			[2]benchOp{bareFresh("bench.Bare2"), guardFresh(noBatch{pool}, once.Forever[receipt]{Name: "bench.Charge2"})})
	})

	// Replays of one key that is done, in both forms.
	if _, _, err := g.Do(ctx, pool, "replayed", fn); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, once.ForeverClaimSQL, "bench.Bare", "", "replayed", "token", nil); err != nil {
		b.Fatal(err)
	}
	bareReplay := func(b *testing.B, _ *benchKeys) func() error {
		return func() error {
			if _, err := pool.Exec(ctx, once.ForeverClaimSQL, "bench.Bare", "", "replayed", "token", nil); err != nil {
				return err
			}
			var id int64
			var state, token, ref, point string
			var attempts int
			var fp, res []byte
			var errText *string
			var stale, expired bool
			return pool.QueryRow(ctx, once.ForeverReadSQL, "bench.Bare", "", "replayed", int64(1e9)).
				Scan(&id, &state, &token, &attempts, &fp, &ref, &res, &errText, &point, &stale, &expired)
		}
	}
	guardReplay := func(b *testing.B, _ *benchKeys) func() error {
		return func() error { _, _, err := g.Do(ctx, pool, "replayed", fn); return err }
	}
	b.Run("replay", func(b *testing.B) {
		compare(b, [2]string{"bare", "guard"}, [2]benchOp{bareReplay, guardReplay})
	})
}
