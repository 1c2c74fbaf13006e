package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:statement key=u.ID cap=-5
func F(ctx context.Context, u User) error { return nil }
