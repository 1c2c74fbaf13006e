package bad

import "context"

type User struct{ ID int64 }

//once:forever key=User{ID:u.ID}.ID
func F(ctx context.Context, u User) error { return nil }

//once:forever key=<-ids
func G(ctx context.Context, ids chan int64) error { return nil }
