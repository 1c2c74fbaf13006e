package once_test

import (
	"context"
	"encoding/json"
	"testing"

	once "github.com/oncekit/once/runtime"
)

// BenchmarkForever compares a forever guard with the bare statements it consists of, in one
// run (see compare): a fresh key (the claim, then the settle) and a replay (the read of the
// recorded result). A guard that has been meeting duplicates reads the key's row before it
// claims, so a replay is that one read; a guard whose keys are new sends the insert alone
// (see claim_history.go). "fresh" is the second case, "fresh-reading-first" the first, where
// the read before every claim is the guard's extra cost on a new key.
//
//	go test -bench 'Forever/.*/guard-vs-bare' -run '^$' -benchtime 2000x ./runtime/
func BenchmarkForever(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	result := receipt{ChargeID: "ch_1", Amount: 500}
	enc, _ := json.Marshal(result)
	fn := func(context.Context) (receipt, error) { return result, nil }
	g := once.Forever{Name: "bench.Charge"}

	// bare: the claim's INSERT and the settle's UPDATE, as the guard sends them.
	// Each comparison has its own name, so their keys never meet.
	bareFresh := func(name string) benchOp {
		return func(b *testing.B, keys *benchKeys) func() error {
			return func() error {
				key := keys.next()
				if _, err := pool.Exec(ctx, once.ForeverClaimPlainSQL, name, "", key, once.NewOperationID(), "token"); err != nil {
					return err
				}
				_, err := pool.Exec(ctx, once.ForeverSettleResultSQL, name, "", key, "token", string(enc))
				return err
			}
		}
	}
	// guardFresh claims new keys with the guard's share of duplicates held at share (every
	// new key would otherwise move it towards 0).
	guardFresh := func(g once.Forever, share float64) benchOp {
		return func(b *testing.B, keys *benchKeys) func() error {
			return func() error {
				once.SetDuplicateShare(g.Name, share)
				_, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: keys.next()}, fn)
				return err
			}
		}
	}
	b.Run("fresh", func(b *testing.B) {
		compare(b, [2]string{"bare", "guard"}, [2]benchOp{bareFresh("bench.Bare"), guardFresh(g, 0)})
	})
	b.Run("fresh-reading-first", func(b *testing.B) {
		compare(b, [2]string{"bare", "guard"},
			[2]benchOp{bareFresh("bench.Bare2"), guardFresh(once.Forever{Name: "bench.Charge2"}, 1)})
	})

	// Replays of one key that is done, in both forms.
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "replayed"}, fn); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, once.ForeverClaimSQL, "bench.Bare", "", "replayed", once.NewOperationID(), "token", nil, nil); err != nil {
		b.Fatal(err)
	}
	// bare: the read of the key's row, as a guard meeting duplicates sends it first.
	bareReplay := func(b *testing.B, _ *benchKeys) func() error {
		return func() error {
			var id, state, token string
			var attempts int
			var fp, res []byte
			var form string
			var errText *string
			var stale, expired bool
			return pool.QueryRow(ctx, once.ForeverReadSQL, "bench.Bare", "", "replayed", int64(1e9)).
				Scan(&id, &state, &token, &attempts, &fp, &res, &form, &errText, &stale, &expired)
		}
	}
	guardReplay := func(b *testing.B, _ *benchKeys) func() error {
		return func() error { _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "replayed"}, fn); return err }
	}
	b.Run("replay", func(b *testing.B) {
		compare(b, [2]string{"bare", "guard"}, [2]benchOp{bareReplay, guardReplay})
	})
}
