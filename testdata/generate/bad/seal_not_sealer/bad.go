package bad

import "context"

type Receipt struct{ ID string }

// keys has Seal but no Open: it is not a once.Sealer.
type keys struct{}

func (keys) Seal(ctx context.Context, plain []byte) ([]byte, error) { return plain, nil }

var vault keys

//once:forever key=id seal=vault
func F(ctx context.Context, id string) (Receipt, error) { return Receipt{}, nil }
