package once_test

import (
	"context"
	"testing"

	once "github.com/oncekit/once/runtime"
)

// BenchmarkOpenDo compares Open.Do on a pool (claim, run, finish; its heartbeat armed) on
// fresh keys with the bare pair of statements it stands for: the partial-unique insert and
// the update that marks the claim done.
//
//	go test -bench 'OpenDo/guard-vs-bare' -run '^$' -benchtime 3000x ./runtime/
func BenchmarkOpenDo(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	const token = "0123456789abcdef0123456789abcdef"
	g := once.Open{Name: "research.StartDo"}
	noop := func(context.Context) (int, error) { return 0, nil }
	bare := func(b *testing.B, keys *benchKeys) func() error {
		return func() error {
			var id int64
			if err := pool.QueryRow(ctx, bareClaimSQL, "research.BareDo", keys.next(), token).Scan(&id); err != nil {
				return err
			}
			_, err := pool.Exec(ctx, `UPDATE once.open_claims SET state = 'done', closed_at = clock_timestamp(), reason = NULL
WHERE id = $1 AND token = $2 AND state = 'open'`, id, token)
			return err
		}
	}
	guard := func(b *testing.B, keys *benchKeys) func() error {
		return func() error { _, _, err := doValue(ctx, g, pool, keys.next(), noop); return err }
	}
	compare(b, [2]string{"bare", "guard"}, [2]benchOp{bare, guard})
}
