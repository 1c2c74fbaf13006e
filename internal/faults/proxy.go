package faults

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxy is a toxiproxy proxy run in this process between pgx and the server (or the pooler).
type Proxy struct {
	mu    sync.Mutex
	p     *toxiproxy.Proxy
	n     int
	Addr  string // host:port the application connects to
	Alive bool
}

// NewProxy starts a proxy forwarding a free loopback port to upstream (host:port).
func NewProxy(upstream string) (*Proxy, error) {
	// The toxics log every interruption through zerolog's global logger, at trace level.
	zerolog.SetGlobalLevel(zerolog.WarnLevel)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.New(io.Discard))
	// Port 0: the proxy binds a free port itself and keeps it across restarts.
	p := toxiproxy.NewProxy(srv, "pg", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("faults: starting the proxy: %w", err)
	}
	return &Proxy{p: p, Addr: p.Listen, Alive: true}, nil
}

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() { p.p.Stop() }

// Toxic adds a toxic of typ with attributes, on stream ("upstream" or "downstream"), and
// returns a func that removes it.
func (p *Proxy) Toxic(typ, stream string, attrs map[string]int64) (remove func(), err error) {
	p.mu.Lock()
	p.n++
	name := typ + "-" + strconv.Itoa(p.n)
	p.mu.Unlock()
	var a []string
	for k, v := range attrs {
		a = append(a, fmt.Sprintf("%q:%d", k, v))
	}
	body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":{%s}}`, name, typ, stream, strings.Join(a, ","))
	if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		return nil, fmt.Errorf("faults: adding toxic %s: %w", typ, err)
	}
	return func() { p.p.Toxics.RemoveToxic(context.Background(), name) }, nil
}

// Disable refuses new connections and drops the open ones (a partition the client sees at
// once), until Enable.
func (p *Proxy) Disable() { p.p.Stop() }

// HealAll removes every toxic still in place and accepts connections again, and says how
// many toxics it removed: a schedule heals each fault it injects, so any is a fault that
// outlived its heal.
func (p *Proxy) HealAll() int {
	n := len(p.p.Toxics.GetToxicArray())
	p.p.Toxics.ResetToxics(context.Background())
	p.Enable()
	return n
}

// Enable accepts connections again after Disable.
func (p *Proxy) Enable() error { return p.p.Start() }

// faultKinds is the table of faults a schedule draws from: each one's name and how it is put
// in place for a while. Durations and sizes are drawn from the run's seeded rng.
var faultKinds = []struct {
	Name   string
	Weight int
	Apply  func(r *rand.Rand, p *Proxy, s Server) (note string, heal func(), err error)
}{
	{"latency", 3, func(r *rand.Rand, p *Proxy, _ Server) (string, func(), error) {
		// The jitter comes from a seed the schedule draws, not toxiproxy's unseeded source.
		lat, jit, seed := int64(r.Intn(150)), int64(r.Intn(100)), r.Int63()
		st := stream(r)
		heal, err := p.Toxic(seededLatencyType, st, map[string]int64{"latency": lat, "jitter": jit, "seed": seed})
		return fmt.Sprintf("%s latency %dms jitter %dms seed %d", st, lat, jit, seed), heal, err
	}},
	{"reset_peer", 3, func(r *rand.Rand, p *Proxy, _ Server) (string, func(), error) {
		ms := int64(r.Intn(200))
		st := stream(r)
		heal, err := p.Toxic("reset_peer", st, map[string]int64{"timeout": ms})
		return fmt.Sprintf("%s reset after %dms", st, ms), heal, err
	}},
	{"limit_data", 2, func(r *rand.Rand, p *Proxy, _ Server) (string, func(), error) {
		n := int64(r.Intn(4000) + 1)
		st := stream(r)
		heal, err := p.Toxic("limit_data", st, map[string]int64{"bytes": n})
		return fmt.Sprintf("%s cut after %d bytes", st, n), heal, err
	}},
	{"half_open", 2, func(r *rand.Rand, p *Proxy, _ Server) (string, func(), error) {
		ms := int64(r.Intn(1500) + 100)
		st := stream(r)
		heal, err := p.Toxic("timeout", st, map[string]int64{"timeout": ms})
		return fmt.Sprintf("%s silent, closed after %dms", st, ms), heal, err
	}},
	{"blackhole", 2, func(r *rand.Rand, p *Proxy, _ Server) (string, func(), error) {
		st := stream(r)
		heal, err := p.Toxic("timeout", st, map[string]int64{"timeout": 0})
		return st + " blackhole", heal, err
	}},
	{"bandwidth", 1, func(r *rand.Rand, p *Proxy, _ Server) (string, func(), error) {
		kb := int64(r.Intn(20) + 1)
		st := stream(r)
		heal, err := p.Toxic("bandwidth", st, map[string]int64{"rate": kb})
		return fmt.Sprintf("%s %d KB/s", st, kb), heal, err
	}},
	{"partition", 2, func(r *rand.Rand, p *Proxy, _ Server) (string, func(), error) {
		p.Disable()
		return "connections refused and dropped", func() {
			// The port is listened on again; a busy machine may refuse it for a moment.
			for deadline := time.Now().Add(10 * time.Second); p.Enable() != nil && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
		}, nil
	}},
	{"server_kill", 1, func(r *rand.Rand, p *Proxy, s Server) (string, func(), error) {
		if s == nil {
			return "", nil, errSkip
		}
		s.Crash()
		return "kill -9 of every server process", func() { s.Restart() }, nil
	}},
}

// Server is the PostgreSQL server a run may kill and restart (pgtest.Server).
type Server interface {
	Crash()
	Restart() error
}

func stream(r *rand.Rand) string {
	if r.Intn(2) == 0 {
		return "upstream"
	}
	return "downstream"
}
