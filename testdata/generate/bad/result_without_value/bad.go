package bad

import "context"

// F returns no value: there is nothing for result= to record or not.
//
//once:forever key=id result=none
func F(ctx context.Context, id string) error { return nil }
