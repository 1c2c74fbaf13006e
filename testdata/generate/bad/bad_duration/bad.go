package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:open key=u.ID "stale=20 minutes"
func F(ctx context.Context, u User) error { return nil }
