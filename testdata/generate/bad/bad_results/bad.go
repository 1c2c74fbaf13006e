package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:forever key=u.ID
func F(ctx context.Context, u User) (int, bool) { return 0, false }
