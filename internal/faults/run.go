package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/fakeprovider"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/oncehttp"
	"github.com/oncekit/once/runtime/onceschema"
)

var errSkip = errors.New("faults: fault not available in this run")

// Config is one run: the seed that drives it, how long the faults last, and where the
// database is.
type Config struct {
	Seed     int64
	Duration time.Duration
	// URL reaches the database (straight, or through a pooler); the run puts the fault proxy
	// in front of its host and port. DirectURL reaches it without the proxy, for the schema,
	// the final state and the workloads' own bookkeeping.
	URL, DirectURL string
	// Server, when set, is killed and restarted as one of the faults.
	Server Server
	// Callers is how many goroutines call at once; Keys how many keys each kind spreads over.
	Callers, Keys int
	// Stale is the forever and open guards' stale window, and the lease's TTL: the bound the
	// checker waits before it probes for keys left open.
	Stale time.Duration
	// Deadline is the longest deadline a caller is given (each draws one up to it); zero
	// means 2 s, short enough that some cut a claim or a settle off.
	Deadline time.Duration
	// Work is how long each effect lasts; zero draws it up to 30 ms.
	Work time.Duration
	// Kinds limits the workload to these kinds (all when empty); "operator" among them runs
	// the operator loop beside them (it always runs when Kinds is empty).
	Kinds []string
	// NoFaults runs the workload without injecting any fault.
	NoFaults bool
	// Setup runs on the direct pool after the schema is applied, and BeforeCheck after the
	// run, before the final state is read: the negative controls break the database there,
	// from outside the runtime.
	Setup, BeforeCheck func(ctx context.Context, direct *pgxpool.Pool) error
}

// Result is what a run did and what the checker found.
type Result struct {
	History    *History
	Final      Final
	Violations []Violation
	// Recovery is how long after the last fault healed the database answered again.
	Recovery time.Duration
	// LeftOpen counts keys still holding something after recovery that no caller was told
	// of (units of a cut-off reservation, a latch of a cut-off firing): documented leaks
	// bounded by a refund or a rearm, not violations.
	LeftOpen map[string]int
}

// Run migrates the database, runs every kind's workload while a seeded schedule injects
// faults for cfg.Duration, heals them, waits for the stale windows, reads the final state and
// checks it.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Callers == 0 {
		cfg.Callers = 16
	}
	if cfg.Keys == 0 {
		cfg.Keys = 8
	}
	if cfg.Deadline == 0 {
		cfg.Deadline = 2 * time.Second
	}
	if cfg.Stale == 0 {
		cfg.Stale = 3 * time.Second
	}
	direct, err := pgxpool.New(ctx, cfg.DirectURL)
	if err != nil {
		return nil, fmt.Errorf("faults: connecting straight to the database: %w", err)
	}
	defer direct.Close()
	if err := onceschema.Migrate(ctx, direct); err != nil {
		return nil, fmt.Errorf("faults: migrating: %w", err)
	}
	if _, err := direct.Exec(ctx, `CREATE TABLE IF NOT EXISTS faults_decisions (key text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`); err != nil {
		return nil, fmt.Errorf("faults: creating the decisions table: %w", err)
	}

	if cfg.Setup != nil {
		if err := cfg.Setup(ctx, direct); err != nil {
			return nil, fmt.Errorf("faults: setup: %w", err)
		}
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("faults: reading the database url: %w", err)
	}
	proxy, err := NewProxy(u.Host)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	upstream := u.Host
	u.Host = proxy.Addr
	pool, _, err := proxiedPool(ctx, u.String(), proxy.Addr, upstream, cfg.Deadline)
	if err != nil {
		return nil, err
	}
	defer pool.Close()

	if err := pool.Ping(ctx); err != nil {
		return nil, fmt.Errorf("faults: reaching the database through the proxy: %w", err)
	}
	h := NewHistory()
	provider := fakeprovider.Start()
	defer provider.Close()
	w := &workload{h: h, pool: pool, direct: direct, stale: cfg.Stale, keys: cfg.Keys, kinds: cfg.Kinds, provider: provider, deadline: cfg.Deadline, work: cfg.Work}
	front, err := oncehttp.New(oncehttp.Config{DB: pool, Name: "faults-http", Stale: cfg.Stale,
		Account: func(*http.Request) (string, error) { return "acct", nil },
		// Under faults the records are often out of reach; the history has every answer.
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	w.front = front(http.HandlerFunc(w.serve))
	operator := len(w.kinds) == 0
	w.kinds = nil
	for _, k := range cfg.Kinds {
		if k == "operator" {
			operator = true
		} else {
			w.kinds = append(w.kinds, k)
		}
	}
	if len(w.kinds) == 0 {
		w.kinds = kinds
	}
	w.operator = operator
	for _, k := range w.kinds {
		w.followups = w.followups || k == "followup"
	}

	w.start = time.Now()
	runCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	var wg sync.WaitGroup
	master := rand.New(rand.NewSource(cfg.Seed))
	for i := 0; i < cfg.Callers; i++ {
		r := rand.New(rand.NewSource(master.Int63()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A call's own deadline cuts it, not the end of the run: the last calls finish.
			for runCtx.Err() == nil {
				w.call(ctx, r)
			}
		}()
	}
	faultRng := rand.New(rand.NewSource(master.Int63()))
	if operator {
		r := rand.New(rand.NewSource(master.Int63()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.operate(runCtx, r)
		}()
	}
	if w.followups {
		for i := 0; i < followUpDrains; i++ {
			r := rand.New(rand.NewSource(master.Int63()))
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.drainLoop(runCtx, r)
			}()
		}
	}
	var lastHeal time.Time
	if cfg.NoFaults {
		<-runCtx.Done()
	} else {
		lastHeal = schedule(runCtx, faultRng, proxy, cfg.Server, h)
	}
	wg.Wait()
	leftover := proxy.HealAll()

	// Recovery: the time from the last heal until a statement through the proxy answers.
	rec := time.Now()
	for {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := pool.Exec(c, `SELECT 1`)
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
		if time.Since(rec) > time.Minute {
			// Say which side stopped answering: the server (or pooler) itself, or the proxy.
			straight := "answers"
			if c, err := pgx.Connect(ctx, cfg.URL); err != nil {
				straight = err.Error()
			} else {
				c.Close(ctx)
			}
			return &Result{History: h}, fmt.Errorf("faults: %s straight: %s; through the proxy: "+
				"the database did not answer for a minute after the faults stopped (%d toxics outlived their heal): %w", upstream, straight, leftover, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res := &Result{History: h, Recovery: time.Since(lastHeal)}
	if lastHeal.IsZero() {
		res.Recovery = time.Since(rec)
	}
	// The documented bound: a claim with no living holder is stale after its window; the
	// background withdrawals behind a pooler end within 2.6 s.
	settle := cfg.Stale + 3*time.Second
	if cfg.NoFaults {
		settle = cfg.Stale + 200*time.Millisecond
	}
	time.Sleep(settle)
	if cfg.BeforeCheck != nil {
		if err := cfg.BeforeCheck(ctx, direct); err != nil {
			return res, fmt.Errorf("faults: before the check: %w", err)
		}
	}
	final, left, err := w.final(ctx)
	if err != nil {
		return res, err
	}
	res.Final, res.LeftOpen = final, left
	res.Violations = Check(h, final)
	return res, nil
}

// schedule injects faults drawn from r until ctx ends, one at a time, each for a while,
// with a pause between; it returns when the last one healed.
func schedule(ctx context.Context, r *rand.Rand, p *Proxy, s Server, h *History) time.Time {
	total := 0
	for _, k := range faultKinds {
		total += k.Weight
	}
	var last time.Time
	for {
		pause := time.Duration(r.Intn(700)+100) * time.Millisecond
		select {
		case <-ctx.Done():
			return last
		case <-time.After(pause):
		}
		n := r.Intn(total)
		i := 0
		for ; n >= faultKinds[i].Weight; i++ {
			n -= faultKinds[i].Weight
		}
		k := faultKinds[i]
		hold := time.Duration(r.Intn(1500)+100) * time.Millisecond
		note, heal, err := k.Apply(r, p, s)
		if err != nil {
			continue
		}
		// The note is the fault as the seed drew it, its timing too: two runs of one seed
		// record the same notes.
		healed := h.Inject(k.Name, fmt.Sprintf("%s, for %s after %s", note, hold, pause))
		select {
		case <-ctx.Done():
		case <-time.After(hold):
		}
		heal()
		healed()
		last = time.Now()
	}
}

// workload is every kind's calls, drawn from a caller's rng.
type workload struct {
	h      *History
	pool   *pgxpool.Pool
	direct *pgxpool.Pool
	stale  time.Duration
	keys   int
	kinds  []string
	// deadline is the longest deadline a caller draws; work how long an effect lasts.
	deadline, work time.Duration
	// provider is the counting fake provider the provider workload pays; front is the
	// Idempotency-Key middleware around a handler that records its effect.
	provider *fakeprovider.Server
	front    http.Handler
	// start is when the workload started: forever keys change every foreverRound from it.
	start time.Time
	// operator says the operator loop runs: some forever calls then end uncertain, for it
	// to resolve.
	operator bool
	// followups says the follow-up workload runs, and its drains with it; mended holds the
	// ids of the doomed follow-ups an operator mended before reviving them.
	followups bool
	mended    sync.Map
}

// serve is the handler behind the Idempotency-Key middleware: its effect is its run.
func (w *workload) serve(rw http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.Header.Get("X-Call"))
	v := fmt.Sprintf("v-%d", id)
	w.h.Effect(Effect{Call: id, Kind: "http", Key: r.Header.Get("Idempotency-Key"), Value: v})()
	rw.WriteHeader(http.StatusOK)
	io.WriteString(rw, v)
}

const statementCap = 3

// foreverRound is how long the forever workload calls one set of keys, and followUpRound
// the follow-up workload: its operations settle quickly, and each enqueues its follow-ups
// only once.
const (
	foreverRound  = 10 * time.Second
	followUpRound = 2 * time.Second
)

var kinds = []string{"forever", "open", "statement", "episode", "lease", "transaction", "provider", "http", "request", "followup"}

func (w *workload) call(ctx context.Context, r *rand.Rand) {
	kind := w.kinds[r.Intn(len(w.kinds))]
	key := fmt.Sprintf("%s-%d", kind, r.Intn(w.keys))
	if kind == "forever" || kind == "followup" {
		// A forever key settles for good: a new set of keys every round keeps claims and
		// settles, not only duplicates, under the faults of a long run.
		length := foreverRound
		if kind == "followup" {
			length = followUpRound
		}
		round := int(time.Since(w.start) / length)
		key = fmt.Sprintf("%s-%d", kind, round*w.keys+r.Intn(w.keys))
	}
	// Callers with deadlines: some short enough to cut a claim or a settle off.
	d := 20*time.Millisecond + time.Duration(r.Int63n(int64(w.deadline)))
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	work := time.Duration(r.Intn(30)) * time.Millisecond
	if w.work > 0 {
		work = w.work
	}
	if kind == "transaction-unfenced" {
		key = fmt.Sprintf("transaction-%d", r.Intn(w.keys))
	}
	if kind == "request-unguarded" {
		key = fmt.Sprintf("request-%d", r.Intn(w.keys))
	}
	id := w.h.Begin(strings.TrimSuffix(strings.TrimSuffix(kind, "-unfenced"), "-unguarded"), key)
	var out once.Outcome
	var err error
	var value string
	var rearm bool
	c := Call{}
	switch kind {
	case "forever":
		g := once.Forever{Name: "faults", Stale: w.stale}
		// With the operator loop running, one call in eight does not know how its effect
		// went (half of them had it, half did not) and leaves the key uncertain.
		unsure := w.operator && r.Intn(8) == 0
		skip := unsure && r.Intn(2) == 0
		value, out, err = once.ForeverValue(cctx, w.pool, g, once.Ref{Key: key}, func(ctx context.Context) (string, error) {
			v := fmt.Sprintf("v-%d", id)
			if skip {
				return "", once.Uncertain(errors.New("the provider's answer was lost before it was sent"))
			}
			done := w.h.Effect(Effect{Call: id, Kind: kind, Key: key, Value: v})
			sleep(ctx, work)
			done()
			if unsure {
				return "", once.Uncertain(errors.New("the provider's answer was lost"))
			}
			return v, nil
		})
	case "followup":
		// The operation's follow-ups are written by the statement that settles it; one in
		// three also enqueues one that fails until an operator mends it.
		doomed := r.Intn(3) == 0
		g := once.Forever{Name: followUpName, Stale: w.stale}
		out, err = g.Do(cctx, w.pool, once.Ref{Key: key}, func(ctx context.Context) error {
			w.h.Effect(Effect{Call: id, Kind: kind, Key: key})()
			enqueued, err := enqueue(ctx, key, doomed)
			value = enqueued
			return err
		})
	case "open":
		g := once.Open{Name: "faults", Stale: w.stale}
		out, err = g.Do(cctx, w.pool, key, func(ctx context.Context) error {
			done := w.h.Effect(Effect{Call: id, Kind: kind, Key: key})
			sleep(ctx, work)
			done()
			return nil
		})
	case "statement":
		c.Cap = statementCap
		g := once.Statement{Name: "faults", Cap: statementCap}
		out, err = g.Do(cctx, w.pool, key, 1, func(ctx context.Context) error {
			done := w.h.Effect(Effect{Call: id, Kind: kind, Key: key})
			done()
			return nil
		})
	case "episode":
		g := once.Episode{Name: "faults"}
		if r.Intn(4) == 0 {
			w.h.Rearm(key)
			_, err = g.Rearm(cctx, w.pool, key)
			rearm = true
			break
		}
		out, err = g.Do(cctx, w.pool, key, func(ctx context.Context) error {
			done := w.h.Effect(Effect{Call: id, Kind: kind, Key: key, Firing: -1})
			done()
			return nil
		})
	case "lease":
		g := once.Lease{Name: "faults", TTL: w.stale}
		out, err = g.Do(cctx, w.pool, key, func(ctx context.Context) error {
			held, _ := once.LeaseFrom(ctx)
			done := w.h.Effect(Effect{Call: id, Kind: kind, Key: key, Fence: held.Fence})
			sleep(ctx, work)
			done()
			return nil
		})
	case "provider":
		// A repeat-safe operation whose effect is a provider call under the operation's
		// provider key: a dead holder's claim runs again, and the provider drops the repeat.
		g := once.Forever{Name: "faults-provider", Stale: w.stale, RepeatSafe: true}
		out, err = g.Do(cctx, w.pool, once.Ref{Key: key}, func(ctx context.Context) error {
			a, _ := once.AttemptFrom(ctx)
			w.h.Effect(Effect{Call: id, Kind: "provider-attempt", Key: key})()
			rep, err := w.provider.Post(ctx, "/v1/charges", a.ProviderKey("charge"), map[string]string{"key": key})
			if err == nil && rep.Status != http.StatusOK {
				err = fmt.Errorf("provider answered %d", rep.Status)
			}
			return err
		})
	case "http":
		req := httptest.NewRequestWithContext(cctx, http.MethodPost, "/v1/things", strings.NewReader(`{"n":1}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("X-Call", strconv.Itoa(id))
		rec := httptest.NewRecorder()
		w.front.ServeHTTP(rec, req)
		value = rec.Body.String()
		switch {
		case rec.Code == http.StatusOK && rec.Header().Get("Idempotent-Replayed") == "true":
			out.Status = once.Duplicate
		case rec.Code == http.StatusOK && value == fmt.Sprintf("v-%d", id):
			out.Status = once.Ran
		case rec.Code == http.StatusOK && value == "" && !rec.Flushed && len(rec.Header()) == 0:
			// Nothing written: the middleware gave up (its context ended) without answering.
			err = errors.New("no response written")
		case rec.Code == http.StatusConflict:
			out.Status = once.InFlight
		default:
			err = fmt.Errorf("status %d: %s", rec.Code, value)
			value = ""
		}
	case "request":
		// Request guards keep no state in the database: callers sharing a request's scope
		// run its key once whatever the database does.
		rctx := once.WithRequestScope(cctx)
		var wg sync.WaitGroup
		for j := 0; j < 4; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				once.Request{Name: "faults"}.Do(rctx, key, func(ctx context.Context) error {
					w.h.Effect(Effect{Call: id, Kind: "request", Key: fmt.Sprintf("%s/%d", key, id)})()
					return nil
				})
			}()
		}
		wg.Wait()
		out.Status = once.Ran
	case "request-unguarded":
		// The request workload's effect without its guard: for the negative control only.
		kind = "request"
		for j := 0; j < 4; j++ {
			w.h.Effect(Effect{Call: id, Kind: "request", Key: fmt.Sprintf("%s/%d", key, id)})()
		}
		out.Status = once.Ran
	case "transaction-unfenced":
		// The transaction guard's work without its lock: for the negative control only.
		kind = "transaction"
		// It thinks long enough that callers started apart on a busy machine still overlap.
		err = pgx.BeginFunc(cctx, w.pool, func(tx pgx.Tx) error {
			return decideOnce(cctx, tx, key, max(w.work, 2*time.Second))
		})
		if err == nil {
			out.Status = once.Ran
		}
	case "transaction":
		g := once.Transaction{Name: "faults"}
		out, err = g.Do(cctx, w.pool, key, func(ctx context.Context, tx pgx.Tx) error {
			return decideOnce(ctx, tx, key, 0)
		})
	}
	w.h.End(id, func(c2 *Call) {
		if out.Status != 0 {
			c2.Status = statusText(out.Status)
		}
		if rearm {
			c2.Status = "rearm"
		}
		if err != nil {
			c2.Err = err.Error()
			c2.NotOwner = errors.Is(err, once.ErrNotOwner)
		}
		c2.Value, c2.Firing, c2.Fence, c2.Count, c2.Cap = value, out.Firing, out.Fence, out.Count, c.Cap
	})
	if kind == "episode" && out.Ran() {
		w.h.setFiring(id, out.Firing)
	}
}

// decideOnce is the transaction workload's decision: read whether the key was decided, and
// if not, write the decision. Two callers that both read "not yet" would both write.
func decideOnce(ctx context.Context, tx pgx.Tx, key string, think time.Duration) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM faults_decisions WHERE key = $1`, key).Scan(&n); err != nil {
		return err
	}
	sleep(ctx, think)
	if n > 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO faults_decisions (key) VALUES ($1)`, key)
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
