package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:transaction key=u.ID
func F(ctx context.Context, u User) error { return nil }
