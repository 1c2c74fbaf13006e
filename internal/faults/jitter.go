package faults

import (
	"math/rand"
	"sync/atomic"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// seededLatency is toxiproxy's latency toxic with its jitter drawn from the run's seed
// rather than from math/rand's global source, which toxiproxy's own latency toxic reads: a
// replay of a seed then meets the same delays. Each connection the toxic sits on draws from
// a source of its own, seeded by the fault's seed and the order the connection met the
// toxic in, so the n-th chunk of the k-th connection is delayed alike in every run of the
// seed (which chunks and connections there are is the workload's, not the seed's).
type seededLatency struct {
	// Latency and Jitter are in milliseconds: each chunk waits Latency ± Jitter.
	Latency int64 `json:"latency"`
	Jitter  int64 `json:"jitter"`
	// Seed is drawn by the schedule for this fault.
	Seed int64 `json:"seed"`
	conn atomic.Int64
}

const seededLatencyType = "seeded_latency"

func init() { toxics.Register(seededLatencyType, new(seededLatency)) }

// NewState gives each connection (each of its streams' stubs) its own seeded source.
func (t *seededLatency) NewState() interface{} {
	return rand.New(rand.NewSource(t.Seed ^ t.conn.Add(1)*0x3779b97f4a7c15))
}

// GetBufferSize is the latency toxic's.
func (t *seededLatency) GetBufferSize() int { return 1024 }

func (t *seededLatency) delay(r *rand.Rand) time.Duration {
	d := t.Latency
	if t.Jitter > 0 {
		d += r.Int63n(t.Jitter*2) - t.Jitter
	}
	return time.Duration(d) * time.Millisecond
}

// Pipe is the latency toxic's, with the delay drawn from the connection's seeded source.
func (t *seededLatency) Pipe(stub *toxics.ToxicStub) {
	r, _ := stub.State.(*rand.Rand)
	if r == nil {
		r = t.NewState().(*rand.Rand)
		stub.State = r
	}
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			sleep := t.delay(r) - time.Since(c.Timestamp)
			select {
			case <-time.After(sleep):
				c.Timestamp = c.Timestamp.Add(sleep)
				stub.Output <- c
			case <-stub.Interrupt:
				// Interrupted (a toxic added or removed): pass the chunk on, as toxiproxy does.
				stub.Output <- c
				return
			}
		}
	}
}
