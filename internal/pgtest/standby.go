package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Replicated is a primary and a streaming standby of its own, both throwaway clusters beside
// the main one: the standby is a pg_basebackup of the primary, streaming from a replication
// slot. The standby's stream passes through a relay in this process, so a test can cut it
// (a network partition) before it kills the primary and promotes the standby.
//
// A pair serves one promotion. Starting one costs two clusters, so a package starts a pair
// per kind of replication it tests and lets all its storms meet the one promotion.
type Replicated struct {
	// Synchronous says the primary waits, at each commit, for the standby to have the
	// commit's WAL (synchronous_standby_names, synchronous_commit=on).
	Synchronous bool
	// URL names both servers with target_session_attrs=read-write: pgx connects to
	// whichever accepts writes, the primary before the promotion, the standby after it.
	URL string
	// PrimaryURL and StandbyURL reach one server each, as superuser.
	PrimaryURL, StandbyURL string

	primary, standby *cluster
	relay            *relay
	bin              string
	cred             *syscall.Credential
	promoted         atomic.Bool
}

// slotName is the standby's replication slot and the application_name it streams under.
const slotName = "once_standby"

// NewReplicated starts a primary and a standby of it (synchronous or not) for t and removes
// both when t ends. Without PostgreSQL it skips t, or fails it under CI=true.
func NewReplicated(t testing.TB, synchronous bool) *Replicated {
	t.Helper()
	r, err := startReplicated(synchronous)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: a primary and a standby: %v (CI=true: fails the build)", err)
		}
		t.Skipf("pgtest: skipped, no primary and standby: %v", err)
	}
	t.Cleanup(r.remove)
	return r
}

func startReplicated(synchronous bool) (*Replicated, error) {
	name := "async"
	settings := []string{"synchronous_commit=on", "wal_level=replica", "max_wal_senders=4", "max_replication_slots=4", "wal_sender_timeout=5s"}
	primarySettings := settings
	if synchronous {
		name = "sync"
		// The standby keeps none: promoted, it has no standby of its own to wait for.
		primarySettings = append(primarySettings[:len(settings):len(settings)], "synchronous_standby_names="+slotName)
	}
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	primary, err := startNamedCluster(name+"-primary", primarySettings)
	if err != nil {
		return nil, fmt.Errorf("the primary: %w", err)
	}
	r := &Replicated{Synchronous: synchronous, primary: primary, bin: bin, cred: cred}
	r.relay, err = startRelay(fmt.Sprintf("127.0.0.1:%d", primary.port))
	if err != nil {
		r.remove()
		return nil, err
	}
	if err := r.startStandby(name, settings); err != nil {
		r.remove()
		return nil, fmt.Errorf("the standby: %w", err)
	}
	r.PrimaryURL, r.StandbyURL = primary.url, r.standby.url
	r.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		primary.port, r.standby.port)
	if err := r.waitStreaming(); err != nil {
		r.remove()
		return nil, err
	}
	return r, nil
}

// startStandby copies the primary with pg_basebackup (through the relay, creating the
// slot) and starts the copy as a hot standby streaming from the slot.
func (r *Replicated) startStandby(name string, settings []string) error {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-%s-standby", dirPrefix, os.Getpid(), name))
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating its directory: %w", err)
	}
	c := &cluster{dir: dir, settings: settings}
	r.standby = c
	if r.cred != nil {
		if err := os.Chown(dir, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
			return fmt.Errorf("handing %s to the postgres user: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", r.relay.port, slotName)
	backup := exec.Command(filepath.Join(r.bin, "pg_basebackup"), "-d", conninfo, "-D", data,
		"-X", "stream", "-S", slotName, "-C", "-R", "--no-sync", "-c", "fast")
	backup.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred, Pdeathsig: syscall.SIGKILL}
	backup.Dir = dir
	if out, err := backup.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_basebackup: %w\n%s", err, out)
	}
	// -R wrote standby.signal and a primary_conninfo; name the slot and the standby in it.
	auto := filepath.Join(data, "postgresql.auto.conf")
	f, err := os.OpenFile(auto, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", auto, err)
	}
	_, err = fmt.Fprintf(f, "primary_conninfo = '%s'\nprimary_slot_name = '%s'\nwal_receiver_timeout = 5s\nwal_retrieve_retry_interval = 200ms\n", conninfo, slotName)
	f.Close()
	if err != nil {
		return fmt.Errorf("writing %s: %w", auto, err)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		if lastErr = c.start(r.bin, data, port, r.cred, false); lastErr == nil {
			return nil
		}
	}
	return lastErr
}

// waitStreaming waits until the standby streams from the primary, as a synchronous standby
// when it is one.
func (r *Replicated) waitStreaming() error {
	want := "async"
	if r.Synchronous {
		want = "sync"
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state string
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, r.PrimaryURL)
		if err == nil {
			err = conn.QueryRow(ctx, "SELECT coalesce(max(sync_state), '') FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'", slotName).Scan(&state)
			conn.Close(ctx)
		}
		cancel()
		if err == nil && state == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the standby is not streaming (%s) within 30s: state %q, %v", want, state, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// CreateDatabase creates database name on the primary (the standby replays it) and returns
// its URL through URL's two hosts.
func (r *Replicated) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, r.PrimaryURL)
	if err != nil {
		return "", fmt.Errorf("connecting to the primary: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return withDatabase(r.URL, name), nil
}

// CutReplication stops the standby's stream, as a partition between the two servers would:
// the relay closes what it carries and refuses the standby's attempts to reconnect. A
// synchronous primary then holds every commit, waiting for the standby; an asynchronous one
// goes on acknowledging commits the standby will never have.
func (r *Replicated) CutReplication() { r.relay.cut() }

// Promote ends the primary at once (SIGQUIT: no shutdown checkpoint, connections dropped, as
// a crash) and promotes the standby, returning when it accepts writes. Callers connected with
// URL find it on their next connection.
func (r *Replicated) Promote(ctx context.Context) error {
	r.primary.stop()
	r.promoted.Store(true)
	conn, err := pgx.Connect(ctx, r.StandbyURL)
	if err != nil {
		return fmt.Errorf("connecting to the standby: %w", err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_promote(true, 60)").Scan(&ok); err != nil || !ok {
		return fmt.Errorf("promoting the standby: %v (promoted: %v)", err, ok)
	}
	return nil
}

// ReopenOldPrimary starts the old primary again after a promotion, on its own and on a new
// timeline of its own, so a test can count what it held that the new primary lacks. Its
// URL is returned (the database of the old primary's URL). Nothing must write to it.
func (r *Replicated) ReopenOldPrimary() (string, error) {
	if !r.promoted.Load() {
		return "", errors.New("the primary is still the primary: promote first")
	}
	data := filepath.Join(r.primary.dir, "data")
	// No standby to wait for, or commits of the reading session would hang.
	r.primary.settings = append(r.primary.settings, "synchronous_standby_names=")
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return "", err
		}
		if err := r.primary.start(r.bin, data, port, r.cred, false); err == nil {
			return r.primary.url, nil
		} else if attempt == 2 {
			return "", fmt.Errorf("restarting the old primary: %w", err)
		}
	}
	return "", errors.New("unreachable")
}

func (r *Replicated) remove() {
	if r.relay != nil {
		r.relay.close()
	}
	for _, c := range []*cluster{r.standby, r.primary} {
		if c != nil {
			c.stop()
			c.remove()
		}
	}
}

// relay forwards TCP connections to a server until it is cut.
type relay struct {
	port   int
	target string
	ln     net.Listener
	mu     sync.Mutex
	isCut  bool
	conns  []net.Conn
}

func startRelay(target string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the replication relay: %w", err)
	}
	r := &relay{port: ln.Addr().(*net.TCPAddr).Port, target: target, ln: ln}
	go r.serve()
	return r, nil
}

func (r *relay) serve() {
	for {
		in, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		if r.isCut {
			r.mu.Unlock()
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", r.target)
		if err != nil {
			r.mu.Unlock()
			in.Close()
			continue
		}
		r.conns = append(r.conns, in, out)
		r.mu.Unlock()
		go func() { io.Copy(out, in); out.Close() }()
		go func() { io.Copy(in, out); in.Close() }()
	}
}

func (r *relay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.isCut = true
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

func (r *relay) close() {
	r.cut()
	r.ln.Close()
}

// String names the pair, for messages.
func (r *Replicated) String() string {
	kind := "asynchronous"
	if r.Synchronous {
		kind = "synchronous"
	}
	return fmt.Sprintf("primary on %d, %s standby on %d", r.primary.port, kind, r.standby.port) + " (relay " + strconv.Itoa(r.relay.port) + ")"
}
