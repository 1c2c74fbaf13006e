package bad

import "context"

//once:forever key=u.ID
func F(ctx context.Context, u Usr) error { return nil }
