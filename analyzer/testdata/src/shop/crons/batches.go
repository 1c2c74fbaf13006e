package crons

import (
	"context"
	"sync"
	"time"
)

// Stamp takes the lease, then hands the users to a batch helper whose workers stamp
// each one: the check and insert two calls down run under the latch too.
func (c *Crons) Stamp(ctx context.Context, ids []int64) {
	if !c.Locks.TryLock("stamp", time.Hour) {
		return
	}
	c.stampBatch(ctx, ids)
}

func (c *Crons) stampBatch(ctx context.Context, ids []int64) {
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { c.stampOne(ctx, id) })
	}
	wg.Wait()
}

func (c *Crons) stampOne(ctx context.Context, id int64) {
	var n int
	if c.DB.QueryRowContext(ctx, `SELECT count(*) FROM history WHERE user_id = $1 AND template = 'stamp'`, id).Scan(&n) != nil || n > 0 {
		return
	}
	c.DB.ExecContext(ctx, `INSERT INTO history (user_id, template) VALUES ($1, 'stamp')`, id)
}

// StampUnlatched runs the same two levels with no latch at the top: two runs at once
// both find no stamp and both insert.
func (c *Crons) StampUnlatched(ctx context.Context, ids []int64) {
	c.stampBatchUnlatched(ctx, ids)
}

func (c *Crons) stampBatchUnlatched(ctx context.Context, ids []int64) {
	for _, id := range ids {
		c.stampOneUnlatched(ctx, id)
	}
}

func (c *Crons) stampOneUnlatched(ctx context.Context, id int64) {
	var n int
	if c.DB.QueryRowContext(ctx, `SELECT count(*) FROM history WHERE user_id = $1 AND template = 'stamp'`, id).Scan(&n) != nil || n > 0 {
		return
	}
	c.DB.ExecContext(ctx, `INSERT INTO history (user_id, template) VALUES ($1, 'stamp')`, id) // want `insert into history is decided by a read of history with no lock`
}
