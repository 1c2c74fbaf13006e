package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:forever key=u.Score
func F(ctx context.Context, u User) error { return nil }
