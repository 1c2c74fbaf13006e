package bad

import (
	"context"
	"encoding/json"
	"time"
)

type Point struct{ X, Y int }

type Order struct {
	ID     int64
	Amount complex128
	Notify chan string
	Done   func()
	ByPos  map[Point]int
}

//once:forever key=o.ID fingerprint=o.Amount,o.Notify,o.Done,o.ByPos
func F(ctx context.Context, o Order) error { return nil }

//once:forever key=o.ID fingerprint=o
func G(ctx context.Context, o Order) error { return nil }

// Request encodes: RawMessage and time.Time marshal themselves, and encoding/json leaves
// unexported fields and fields tagged json:"-" out.
type Request struct {
	ID     int64
	Body   json.RawMessage
	At     time.Time
	Tags   map[string][]Point
	hidden chan int
	Skip   func() `json:"-"`
	Point
}

//once:forever key=r.ID fingerprint=r,r.At,&r.Tags
func H(ctx context.Context, r Request) error { return nil }
