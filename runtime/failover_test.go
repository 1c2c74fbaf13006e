package once_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
)

// A standby promoted mid-storm: each kind's callers fire their keys at a primary whose
// stream to the standby is cut (a partition), the primary dies, the standby is promoted, and
// the callers, connected by both hosts with target_session_attrs=read-write, go on against
// it; then every key is asked once more, as a client's retry would. Counted for each kind:
// effects run more than once for a key (a duplicate), two holders at once (open, lease), and
// outcomes a caller saw acknowledged ("ran") that the new primary does not hold (lost).
//
// Synchronous standby: the primary cannot acknowledge what the standby lacks, so nothing is
// lost and nothing runs twice. Asynchronous: what the primary acknowledged during the cut is
// gone; a forever claim lost with it runs its effect again on the retry, and a provider key
// derived from the operation's key (not from the claim) makes the provider drop the repeat.
func TestFailover_SynchronousStandbyPromotedMidStormLosesNothing(t *testing.T) {
	t.Parallel()
	f := runFailover(t, true)
	for _, k := range f.kinds {
		if k.duplicates != 0 || k.overlaps != 0 || k.lost != 0 {
			t.Errorf("%s across a synchronous promotion: %d duplicate effects, %d overlapping holders, %d acknowledged outcomes lost; want none",
				k.name, k.duplicates, k.overlaps, k.lost)
		}
	}
	if f.kind("forever").acked == 0 || f.kind("statement").acked == 0 {
		t.Fatalf("no outcome acknowledged: the storm did not run")
	}
}

func TestFailover_AsynchronousStandbyPromotedMidStormLosesWhatTheREADMESays(t *testing.T) {
	t.Parallel()
	f := runFailover(t, false)
	lost := 0
	for _, k := range f.kinds {
		lost += k.lost
		if k.lostNotOnOld != 0 {
			t.Errorf("%s: %d outcomes acknowledged and lost that the old primary does not hold either", k.name, k.lostNotOnOld)
		}
	}
	if lost == 0 {
		t.Fatalf("nothing acknowledged during the cut was lost: the test shows nothing about an asynchronous standby")
	}
	fv := f.kind("forever")
	// The README: a claim acknowledged and lost can run its effect again; a provider key
	// derived from the operation's key lets the provider drop the repeat.
	if fv.lost > 0 && fv.duplicates == 0 {
		t.Errorf("forever: %d claims lost and none ran again on the retry; want the repeat the README warns of", fv.lost)
	}
	if got, want := f.provider.Effects(), fv.keysRun; got != want {
		t.Errorf("the provider performed %d effects for %d keys that ran; want one each (the derived key dedupes the repeats)", got, want)
	}
	// The statement and latch guards have no key of their own at the provider: a lost
	// reservation or firing is an effect again, the loss the README counts.
	for _, k := range f.kinds {
		t.Logf("%s: %d acknowledged, %d lost, %d duplicate effects, %d overlapping holders", k.name, k.acked, k.lost, k.duplicates, k.overlaps)
	}
}

// failoverKind is one kind's storm and its counts.
type failoverKind struct {
	name string
	// fire calls the guard once for key. acked: the call ran the effect and its outcome was
	// acknowledged; final: the call has an answer (retrying after a lost connection does
	// not count).
	fire func(ctx context.Context, db once.DB, key string) (acked, final bool)
	// kept reports whether the acknowledged outcome for key is on the server db.
	kept func(ctx context.Context, db once.DB, key string) (bool, error)
	// retry says the retry pass asks every key again (open and lease may run again once
	// the holder is done: their promise is one holder at a time, counted as overlaps).
	retry bool

	mu         sync.Mutex
	runs       map[string]int  // effects run per key
	ackedKeys  map[string]bool // keys whose outcome a caller saw acknowledged
	active     map[string]int  // holders running now per key
	acked      int
	duplicates int
	overlaps   int
	lost       int
	// lostNotOnOld counts lost outcomes the old primary does not hold: those were never
	// acknowledged by anyone, so must be 0.
	lostNotOnOld int
	keysRun      int
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

type failover struct {
	kinds    []*failoverKind
	provider *fakeprovider.Server
}

func (f *failover) kind(name string) *failoverKind {
	for _, k := range f.kinds {
		if k.name == name {
			return k
		}
	}
	panic("no kind " + name)
}

const (
	failoverKeys    = 40
	failoverCallers = 6
)

// envFailover turns the failover tests on. They are off by default: the callers do not yet
// reach the promoted standby (their connections to it time out), which is still being found.
const envFailover = "ONCE_TEST_FAILOVER"

func runFailover(t *testing.T, synchronous bool) *failover {
	if os.Getenv(envFailover) == "" {
		t.Skipf("%s unset: the failover tests are not finished", envFailover)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pair := pgtest.NewReplicated(t, synchronous)
	url, err := pair.CreateDatabase(ctx, "storm")
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
	if err := once.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE decisions (key text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	f := &failover{provider: fakeprovider.New(t)}
	f.kinds = failoverKinds(f.provider)

	// The storm: every caller of every kind goes through the keys in order, retrying a key
	// whose call failed (a dropped connection, a read-only server) until it has an answer.
	var wg sync.WaitGroup
	for _, k := range f.kinds {
		for range failoverCallers {
			wg.Go(func() {
				for i := range failoverKeys {
					fireUntilAnswered(ctx, k, pool, fmt.Sprintf("k%02d", i))
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
	}
	time.Sleep(150 * time.Millisecond)
	pair.CutReplication()
	time.Sleep(250 * time.Millisecond) // a synchronous primary holds its commits; an asynchronous one acknowledges them
	if err := pair.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	// A client's retry of every key, against the new primary.
	for _, k := range f.kinds {
		if k.retry {
			for i := range failoverKeys {
				fireUntilAnswered(ctx, k, pool, fmt.Sprintf("k%02d", i))
			}
		}
	}

	old, err := pair.ReopenOldPrimary()
	if err != nil {
		t.Fatal(err)
	}
	oldConn, err := pgx.Connect(ctx, withDB(old, "storm"))
	if err != nil {
		t.Fatal(err)
	}
	defer oldConn.Close(context.Background())
	for _, k := range f.kinds {
		for _, n := range k.runs {
			if n > 1 && k.retry {
				k.duplicates += n - 1
			}
			k.keysRun++
		}
		for key := range k.ackedKeys {
			k.acked++
			if k.kept == nil {
				continue
			}
			ok, err := k.kept(ctx, pool, key)
			if err != nil {
				t.Fatalf("%s: reading %s on the new primary: %v", k.name, key, err)
			}
			if ok {
				continue
			}
			k.lost++
			onOld, err := k.kept(ctx, oldConn, key)
			if err != nil {
				t.Fatalf("%s: reading %s on the old primary: %v", k.name, key, err)
			}
			if !onOld {
				k.lostNotOnOld++
			}
		}
		t.Logf("%s: %d acknowledged, %d lost, %d duplicate effects, %d overlapping holders", k.name, k.acked, k.lost, k.duplicates, k.overlaps)
	}
	return f
}

// withDB replaces the database of a URL.
func withDB(u, name string) string {
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		return u
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
}

func fireUntilAnswered(ctx context.Context, k *failoverKind, db once.DB, key string) {
	for ctx.Err() == nil {
		acked, final := k.fire(ctx, db, key)
		if acked {
			k.mu.Lock()
			k.ackedKeys[key] = true
			k.mu.Unlock()
		}
		if final {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func failoverKinds(provider *fakeprovider.Server) []*failoverKind {
	newKind := func(name string, retry bool) *failoverKind {
		return &failoverKind{name: name, retry: retry, runs: map[string]int{}, ackedKeys: map[string]bool{}, active: map[string]int{}}
	}
	exists := func(sql string) func(ctx context.Context, db once.DB, key string) (bool, error) {
		return func(ctx context.Context, db once.DB, key string) (bool, error) {
			var ok bool
			err := db.QueryRow(ctx, sql, key).Scan(&ok)
			return ok, err
		}
	}
	forever := newKind("forever", true)
	fg := once.Forever[string]{Name: "failover.forever"}
	forever.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := fg.Do(ctx, db, key, func(ctx context.Context) (string, error) {
			forever.ran(key)
			// Derived from the operation's key, not from the claim: a claim lost and made
			// again asks the provider with the same key.
			r, err := provider.Post(ctx, "/charges", once.ProviderKey("charge", fg.Name+"/"+key), map[string]string{"key": key})
			return r.ID, err
		})
		switch {
		case err == nil:
			return out.Status == once.Ran, true
		case errors.Is(err, once.ErrInFlight), errors.Is(err, once.ErrUncertain):
			return false, true // an open or uncertain operation: an answer, not a retry
		}
		return false, false
	}
	forever.kept = exists("SELECT count(*) = 1 FROM once.operations WHERE name = 'failover.forever' AND key = $1 AND state = 'done'")

	statement := newKind("statement", true)
	sg := once.Statement[int]{Name: "failover.statement", Cap: 1}
	statement.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := sg.Do(ctx, db, key, 1, func(context.Context) (int, error) { statement.ran(key); return 0, nil })
		if err != nil {
			return false, false
		}
		return out.Status == once.Ran, true
	}
	statement.kept = exists("SELECT count(*) = 1 FROM once.counter_slots WHERE name = 'failover.statement' AND key = $1")

	episode := newKind("episode", true)
	eg := once.Episode[int]{Name: "failover.episode"}
	episode.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := eg.Do(ctx, db, key, func(context.Context) (int, error) { episode.ran(key); return 0, nil })
		if err != nil {
			return false, false
		}
		return out.Status == once.Ran, true
	}
	episode.kept = exists("SELECT count(*) = 1 FROM once.latches WHERE name = 'failover.episode' AND key = $1 AND fired_at IS NOT NULL")

	transaction := newKind("transaction", true)
	tg := once.Transaction[bool]{Name: "failover.transaction"}
	transaction.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		decided, _, err := tg.Do(ctx, db, key, func(ctx context.Context, tx pgx.Tx) (bool, error) {
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
	transaction.kept = exists("SELECT count(*) = 1 FROM decisions WHERE key = $1")

	open := newKind("open", false)
	og := once.Open[int]{Name: "failover.open", Stale: time.Minute}
	open.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := og.Do(ctx, db, key, func(context.Context) (int, error) { defer open.hold(key)(); return 0, nil })
		if err != nil && !errors.Is(err, once.ErrInFlight) {
			return false, false
		}
		return err == nil && out.Status == once.Ran, true
	}
	open.kept = exists("SELECT count(*) >= 1 FROM once.open_claims WHERE name = 'failover.open' AND key = $1 AND state = 'done'")

	lease := newKind("lease", false)
	lg := once.Lease[int]{Name: "failover.lease", TTL: time.Minute}
	lease.fire = func(ctx context.Context, db once.DB, key string) (bool, bool) {
		_, out, err := lg.Do(ctx, db, key, func(context.Context) (int, error) { defer lease.hold(key)(); return 0, nil })
		if errors.Is(err, once.ErrBusy) {
			return false, true
		}
		if err != nil {
			return false, false
		}
		return out.Status == once.Ran, true
	}
	return []*failoverKind{forever, statement, episode, transaction, open, lease}
}
