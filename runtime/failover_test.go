package once_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

// A standby promoted mid-storm: each kind's callers fire their keys, one after another, at a
// primary streaming to a standby; once every kind has outcomes acknowledged, the stream is
// cut (a partition), then the primary dies, the standby is promoted, and the callers,
// connected by both hosts with target_session_attrs=read-write, go on against it until every
// kind has outcomes acknowledged there too; then every key is asked once more, as a client's
// retry would. Counted for each kind: effects run more than once for a key (a duplicate),
// two holders at once (open, lease), and acknowledged outcomes the new primary does not
// account for (lost: per key, the calls that saw "ran" beyond the claims, reservations,
// firings, decisions or acquisitions the new primary holds).
//
// Synchronous standby: the primary cannot acknowledge what the standby lacks, so nothing is
// lost and nothing runs twice. Asynchronous (the same storm, the negative control): what the
// primary acknowledged during the cut is gone, each loss as docs/deployment.md says.
func TestFailover_SynchronousStandbyPromotedMidStormLosesNothing(t *testing.T) {
	t.Parallel()
	f := runFailover(t, true)
	interrupted := 0
	for _, k := range f.kinds {
		interrupted += k.interrupted
		if k.duplicates != 0 || k.overlaps != 0 || k.lost != 0 {
			t.Errorf("%s across a synchronous promotion: %d duplicate effects, %d overlapping holders, %d acknowledged outcomes lost; want none",
				k.name, k.duplicates, k.overlaps, k.lost)
		}
	}
	if interrupted == 0 {
		t.Errorf("no call was interrupted by the promotion: the storm did not straddle it")
	}
	if got, want := f.provider.Effects(), f.kind("forever").keysRun; got != want {
		t.Errorf("the provider performed %d effects for %d forever keys that ran; want one each", got, want)
	}
}

func TestFailover_AsynchronousStandbyPromotedMidStormLosesWhatTheDeploymentDocSays(t *testing.T) {
	t.Parallel()
	f := runFailover(t, false)
	lost := 0
	for _, k := range f.kinds {
		lost += k.lost
		if k.unexplained != 0 {
			t.Errorf("%s: %d keys lost acknowledged outcomes that the old primary does not hold either", k.name, k.unexplained)
		}
		if k.overlaps != 0 {
			t.Logf("%s: %d overlapping holders (a lost claim or lease taken again while its holder ran)", k.name, k.overlaps)
		}
	}
	if lost == 0 {
		t.Fatalf("nothing acknowledged during the cut was lost: the test shows nothing about an asynchronous standby")
	}
	// docs/deployment.md: a lost claim lets the key be claimed and its effect run again, a lost
	// settle leaves the operation open; a lost reservation, firing or decision runs its
	// effect again on the retry.
	fv := f.kind("forever")
	if fv.lost != fv.lostRerun+fv.lostOpen {
		t.Errorf("forever: %d outcomes lost, of which %d ran again and %d are left open; want every loss to be one of the two", fv.lost, fv.lostRerun, fv.lostOpen)
	}
	for _, name := range []string{"statement", "episode", "transaction"} {
		if k := f.kind(name); k.lost != k.duplicates {
			t.Errorf("%s: %d acknowledged outcomes lost and %d effects run again; want each loss run again once on the retry", name, k.lost, k.duplicates)
		}
	}
	// A provider key derived from the operation's key, not from the claim, asks the
	// provider again with the same key: it performs one effect per key and replays the rest.
	if got, want := f.provider.Effects(), fv.keysRun; got != want {
		t.Errorf("the provider performed %d effects for %d forever keys that ran; want one each (the derived key dedupes the repeats)", got, want)
	}
	if fv.duplicates > 0 && f.provider.Replays() < fv.duplicates {
		t.Errorf("forever ran %d effects again and the provider replayed %d: a repeat reached it as a new effect", fv.duplicates, f.provider.Replays())
	}
}

// failoverKind is one kind's storm and its counts.
type failoverKind struct {
	name string
	// fire calls the guard once for key. acked: the call ran the effect and its outcome was
	// acknowledged; final: the call has an answer (retrying after a lost connection does
	// not count).
	fire func(ctx context.Context, db once.DB, key string) (acked, final bool)
	// kept counts the acknowledged outcomes for key the server db accounts for.
	kept func(ctx context.Context, db once.DB, key string) (int, error)
	// single says the promise allows one run per key (a second is a duplicate); open and
	// lease may run a key again once its holder is done (their promise is one holder at a
	// time, counted as overlaps), and are not asked again by the retry pass.
	single bool

	mu          sync.Mutex
	runs        map[string]int // effects run per key
	acked       map[string]int // calls per key that saw their outcome acknowledged
	active      map[string]int // holders running now per key
	ackedIn     [3]int         // acknowledged calls per phase: streaming, cut, promoted
	interrupted int            // calls that failed for want of a server and were retried
	fired       int            // keys fired so far: 0 to fired-1
	duplicates  int
	overlaps    int
	lost        int
	// lostRerun and lostOpen split forever's losses: keys that ran again, keys left open.
	lostRerun, lostOpen int
	// unexplained counts keys with more acknowledged outcomes than the new and old primary
	// together hold: those were never committed anywhere, so must be 0.
	unexplained int
	keysRun     int
}

func (k *failoverKind) ran(key string) {
	k.mu.Lock()
	k.runs[key]++
	k.mu.Unlock()
}

// hold counts a holder running for key for the span of fn.
func (k *failoverKind) hold(key string) func() {
	k.mu.Lock()
	k.active[key]++
	if k.active[key] > 1 {
		k.overlaps++
	}
	k.runs[key]++
	k.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	return func() { k.mu.Lock(); k.active[key]--; k.mu.Unlock() }
}

func (k *failoverKind) ackedInPhase(p int) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ackedIn[p]
}

type failover struct {
	kinds    []*failoverKind
	provider *fakeprovider.Server
	phase    atomic.Int32
}

func (f *failover) kind(name string) *failoverKind {
	for _, k := range f.kinds {
		if k.name == name {
			return k
		}
	}
	panic("no kind " + name)
}

// waitAcked waits until every kind has at least n calls acknowledged in phase p.
func (f *failover) waitAcked(t *testing.T, p, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		short := ""
		for _, k := range f.kinds {
			if k.ackedInPhase(p) < n {
				short = k.name
			}
		}
		if short == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("phase %d: %s has fewer than %d calls acknowledged after %v", p, short, n, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const (
	failoverCallers = 4   // callers per kind, all going through the same keys
	failoverMaxKeys = 400 // a bound on the storm, never reached in a healthy run
	phaseAcks       = 4   // acknowledged calls each kind needs in a phase before the next
)

func runFailover(t *testing.T, synchronous bool) *failover {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// One pair per test: a pair serves one promotion.
	pair := pgtest.NewReplicated(t, synchronous)
	const name = "storm"
	url, err := pair.CreateDatabase(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 6 * failoverCallers
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE decisions (key text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	checkReplicationWarnings(ctx, t, pool, synchronous)
	f := &failover{provider: fakeprovider.New(t)}
	f.kinds = failoverKinds(f.provider)

	// The storm: every caller of every kind goes through the keys in order, retrying a key
	// whose call failed (a dropped connection, a read-only server) until it has an answer,
	// until told to stop. A kind with twice the acknowledgements a phase needs waits for the
	// next phase, so a fast kind does not run out of keys before the promotion.
	var stop atomic.Bool
	var wg sync.WaitGroup
	for _, k := range f.kinds {
		for range failoverCallers {
			wg.Go(func() {
				for i := 0; i < failoverMaxKeys && !stop.Load(); i++ {
					for !stop.Load() && k.ackedInPhase(int(f.phase.Load())) >= 2*phaseAcks {
						time.Sleep(5 * time.Millisecond)
					}
					fireUntilAnswered(ctx, f, k, pool, failoverKey(i))
					k.mu.Lock()
					k.fired = max(k.fired, i+1)
					k.mu.Unlock()
					time.Sleep(5 * time.Millisecond)
				}
			})
		}
	}
	f.waitAcked(t, 0, phaseAcks, time.Minute)
	pair.CutReplication()
	f.phase.Store(1)
	if synchronous {
		// The primary acknowledges nothing now: its commits wait for the standby.
		time.Sleep(300 * time.Millisecond)
	} else {
		f.waitAcked(t, 1, phaseAcks, 30*time.Second)
	}
	if err := pair.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	f.phase.Store(2)
	f.waitAcked(t, 2, phaseAcks, time.Minute)
	stop.Store(true)
	wg.Wait()
	// A client's retry of every key, against the new primary.
	for _, k := range f.kinds {
		if k.single {
			for i := range k.fired {
				fireUntilAnswered(ctx, f, k, pool, failoverKey(i))
			}
		}
	}

	var oldConn *pgx.Conn
	if !synchronous {
		old, err := pair.ReopenOldPrimary()
		if err != nil {
			t.Fatal(err)
		}
		oldConn, err = pgx.Connect(ctx, withDB(old, name))
		if err != nil {
			t.Fatal(err)
		}
		defer oldConn.Close(context.Background())
	}
	for _, k := range f.kinds {
		for _, n := range k.runs {
			if n > 1 && k.single {
				k.duplicates += n - 1
			}
			k.keysRun++
		}
		for key, acked := range k.acked {
			kept, err := k.kept(ctx, pool, key)
			if err != nil {
				t.Fatalf("%s: reading %s on the new primary: %v", k.name, key, err)
			}
			if acked <= kept {
				continue
			}
			k.lost += acked - kept
			if k.name == "forever" {
				var open bool
				if err := pool.QueryRow(ctx, "SELECT count(*) = 1 FROM once.operations WHERE name = 'failover.forever' AND key = $1 AND state = 'open'", key).Scan(&open); err != nil {
					t.Fatal(err)
				}
				switch {
				case open:
					k.lostOpen += acked - kept
				case k.runs[key] > 1:
					k.lostRerun += acked - kept
				}
			}
			if oldConn == nil {
				continue
			}
			onOld, err := k.kept(ctx, oldConn, key)
			if err != nil {
				t.Fatalf("%s: reading %s on the old primary: %v", k.name, key, err)
			}
			if acked > kept+onOld {
				k.unexplained++
			}
		}
		t.Logf("%s: %d/%d/%d calls acknowledged streaming/cut/promoted, %d interrupted, %d keys run, %d lost, %d duplicate effects, %d overlapping holders",
			k.name, k.ackedIn[0], k.ackedIn[1], k.ackedIn[2], k.interrupted, k.keysRun, k.lost, k.duplicates, k.overlaps)
	}
	return f
}

func failoverKey(i int) string { return fmt.Sprintf("k%03d", i) }

// withDB replaces the database of a URL.
func withDB(u, name string) string {
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		return u
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
}

func fireUntilAnswered(ctx context.Context, f *failover, k *failoverKind, db once.DB, key string) {
	for ctx.Err() == nil {
		acked, final := k.fire(ctx, db, key)
		k.mu.Lock()
		if acked {
			k.acked[key]++
			k.ackedIn[f.phase.Load()]++
		}
		if !final {
			k.interrupted++
		}
		k.mu.Unlock()
		if final {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func failoverKinds(provider *fakeprovider.Server) []*failoverKind {
	newKind := func(name string, single bool) *failoverKind {
		return &failoverKind{name: name, single: single, runs: map[string]int{}, acked: map[string]int{}, active: map[string]int{}}
	}
	count := func(sql string) func(ctx context.Context, db once.DB, key string) (int, error) {
		return func(ctx context.Context, db once.DB, key string) (int, error) {
			var n int
			err := db.QueryRow(ctx, sql, key).Scan(&n)
			return n, err
		}
	}
	forever := newKind("forever", true)
	fg := once.Forever{Name: "failover.forever"}
	forever.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := once.ForeverValue(ctx, db, fg, once.Ref{Key: key}, func(ctx context.Context) (string, error) {
			forever.ran(key)
			// Derived from the operation's key, not from the claim: a claim lost and made
			// again asks the provider with the same key.
			r, err := provider.Post(ctx, "/charges", once.ProviderKey("charge", fg.Name+"/"+key), map[string]string{"key": key})
			return r.ID, err
		})
		switch {
		case err == nil:
			return out.Status == once.Ran, true // or in flight: an answer, not a retry
		case errors.Is(err, once.ErrUncertain):
			return false, true // an uncertain operation: an answer, not a retry
		}
		return false, false
	}
	forever.kept = count("SELECT count(*) FROM once.operations WHERE name = 'failover.forever' AND key = $1 AND state = 'done'")

	statement := newKind("statement", true)
	sg := once.Statement{Name: "failover.statement", Cap: 1}
	statement.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := stmtValue(ctx, sg, db, key, 1, func(context.Context) (int, error) { statement.ran(key); return 0, nil })
		if err != nil {
			return false, false
		}
		return out.Status == once.Ran, true
	}
	statement.kept = count("SELECT count(*) FROM once.counter_slots WHERE name = 'failover.statement' AND key = $1")

	episode := newKind("episode", true)
	eg := once.Episode{Name: "failover.episode"}
	episode.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := doValue(ctx, eg, db, key, func(context.Context) (int, error) { episode.ran(key); return 0, nil })
		if err != nil {
			return false, false
		}
		return out.Status == once.Ran, true
	}
	episode.kept = count("SELECT coalesce(sum(firings), 0) FROM once.latches WHERE name = 'failover.episode' AND key = $1")

	transaction := newKind("transaction", true)
	tg := once.Transaction{Name: "failover.transaction"}
	transaction.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		decided, _, err := txValue(ctx, tg, db, key, func(ctx context.Context, tx pgx.Tx) (bool, error) {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM decisions WHERE key = $1", key).Scan(&n); err != nil || n > 0 {
				return false, err
			}
			_, err := tx.Exec(ctx, "INSERT INTO decisions (key) VALUES ($1)", key)
			return err == nil, err
		})
		if err != nil {
			return false, false
		}
		if decided {
			transaction.ran(key) // the decision's effect is its committed row
		}
		return decided, true
	}
	transaction.kept = count("SELECT count(*) FROM decisions WHERE key = $1")

	open := newKind("open", false)
	og := once.Open{Name: "failover.open", Stale: time.Minute}
	open.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := doValue(ctx, og, db, key, func(context.Context) (int, error) { defer open.hold(key)(); return 0, nil })
		if err != nil {
			return false, false
		}
		return out.Status == once.Ran, true
	}
	open.kept = count("SELECT count(*) FROM once.open_claims WHERE name = 'failover.open' AND key = $1 AND state = 'done'")

	lease := newKind("lease", false)
	lg := once.Lease{Name: "failover.lease", TTL: time.Minute}
	lease.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := doValue(ctx, lg, db, key, func(context.Context) (int, error) { defer lease.hold(key)(); return 0, nil })
		if err != nil {
			return false, false
		}
		return out.Status == once.Ran, true // or busy: an answer, not a retry
	}
	// Every acquisition bumps the fence.
	lease.kept = count("SELECT coalesce(sum(fence), 0) FROM once.leases WHERE name = 'failover.lease' AND key = $1")
	return []*failoverKind{forever, statement, episode, transaction, open, lease}
}

// checkReplicationWarnings: before the storm, VerifyWarnings warns of an asynchronous
// standby, and of a synchronous one that a session's synchronous_commit=local does not wait
// for; it says nothing of a synchronous standby that commits wait for.
func checkReplicationWarnings(ctx context.Context, t *testing.T, pool *pgxpool.Pool, synchronous bool) {
	t.Helper()
	// The test binary registers requirements of other tests' tables: only the warnings count.
	warnings, err := onceschema.VerifyWarnings(ctx, pool)
	if err != nil && !errors.Is(err, onceschema.ErrSchema) {
		t.Fatalf("verify: %v", err)
	}
	asyncWarned := func(ws []onceschema.Warning) bool {
		return len(ws) == 1 && errors.Is(ws[0], onceschema.ErrAsyncStandby) && strings.Contains(ws[0].Error(), "synchronous")
	}
	if !synchronous {
		if !asyncWarned(warnings) {
			t.Errorf("an asynchronous standby: VerifyWarnings = %v; want one ErrAsyncStandby", warnings)
		}
		return
	}
	if len(warnings) != 0 {
		t.Errorf("a synchronous standby: VerifyWarnings = %v; want none", warnings)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET synchronous_commit = local"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "RESET synchronous_commit")
	if w, err := onceschema.VerifyWarnings(ctx, conn.Conn()); (err != nil && !errors.Is(err, onceschema.ErrSchema)) || !asyncWarned(w) || !strings.Contains(w[0].Detail, "synchronous_commit is local") {
		t.Errorf("a synchronous standby and synchronous_commit=local: VerifyWarnings = %v, %v; want one ErrAsyncStandby naming the setting", w, err)
	}
}
