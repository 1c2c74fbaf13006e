package bad

import (
	"context"
	"time"
)

type User struct{ ID int64 }

//once:forever key=u.ID,time.Now().Unix()
func F(ctx context.Context, u User) error { _ = time.Now; return nil }
