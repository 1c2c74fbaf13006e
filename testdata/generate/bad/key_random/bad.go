package bad

import (
	"context"
	"math/rand/v2"
)

type User struct{ ID int64 }

//once:forever key=rand.Int64()
func F(ctx context.Context, u User) error { _ = rand.Int64; return nil }
