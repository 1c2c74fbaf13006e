package bad

import "context"

type Receipt struct{ ID string }

type Sealer interface {
	Seal(ctx context.Context, plain []byte) ([]byte, error)
	Open(ctx context.Context, sealed []byte) ([]byte, error)
}

// The sealer is a parameter: a guard's sealer is the package's, not a call's.
//
//once:forever key=id seal=s
func F(ctx context.Context, s Sealer, id string) (Receipt, error) { return Receipt{}, nil }
