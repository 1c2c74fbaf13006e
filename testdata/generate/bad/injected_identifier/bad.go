package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:forever "table=jobs(id);DROP" columns=id
func F(ctx context.Context, u User) error { return nil }
