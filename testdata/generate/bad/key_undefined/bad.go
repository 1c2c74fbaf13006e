package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:forever key=user.ID
func F(ctx context.Context, u User) error { return nil }
