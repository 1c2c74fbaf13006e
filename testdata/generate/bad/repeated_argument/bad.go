package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:lease ttl=1s ttl=2s key=u.ID
func F(ctx context.Context, u User) error { return nil }
