package bad

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Two caps on one counter column: its cap check can hold only one of them.

//once:statement table=quota columns=org_id,day counter=used cap=100
func Spend(ctx context.Context, tx pgx.Tx, org int64) error { return nil }

//once:statement table=quota columns=org_id,day counter=used cap=50
func SpendLess(ctx context.Context, tx pgx.Tx, org int64) error { return nil }
