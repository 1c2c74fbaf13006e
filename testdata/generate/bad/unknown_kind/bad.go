package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:forevr key=u.ID
func F(ctx context.Context, u User) error { return nil }
