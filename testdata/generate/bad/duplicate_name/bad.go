package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:forever key=u.ID name=billing.charge
func F(ctx context.Context, u User) error { return nil }

//once:forever key=u.ID name=billing.charge
func G(ctx context.Context, u User) error { return nil }
