package pgtest

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL names the environment variable that points the tests at an existing server.
const EnvURL = "ONCE_TEST_DATABASE_URL"

// templateName is the empty database every test database is copied from.
const templateName = "once_pgtest_template"

var (
	mu       sync.Mutex
	started  bool
	own      *cluster // the cluster Main started, if any
	adminURL string   // superuser URL of a maintenance database on the server in use
	absent   error    // why there is no server, when there is none
	prepared []string // prepared databases made on a shared server, dropped at the end
	counter  atomic.Int64

	// bouncer is the PgBouncer started in front of the server, when EnvPgBouncer asked for
	// it or a test asked for a pooled database; bouncerErr says why there is none.
	bouncer     *pooler
	bouncerErr  error
	bouncerTold bool   // bouncer or bouncerErr is set
	poolMode    string // EnvPgBouncer's exec mode: every test database's URL goes through the pooler
)

// Main prepares a server, runs the tests and removes the server again. It returns the exit
// code for os.Exit. A server that cannot be had does not stop the tests that need none: New
// and NewDatabase report the reason in the tests that do.
//
// Runnable examples cannot skip, and those of this module need a database to print their
// output; so where there is plainly no server to be had (no ONCE_TEST_DATABASE_URL, no
// PostgreSQL binaries) and CI is not true, Main leaves the examples out, unless -run was given,
// and says so.
func Main(m *testing.M) int {
	defer shutdown()
	// m.Run parses the flags, but -run must be read before: a TestMain runs first.
	if !flag.Parsed() {
		flag.Parse()
	}
	if reason := plainlyAbsent(); reason != nil && os.Getenv("CI") != "true" {
		if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
			flag.Set("test.run", "^(Test|Fuzz)")
			fmt.Fprintf(os.Stderr, "pgtest: %v; runnable examples are left out\n", reason)
		}
	}
	return m.Run()
}

// plainlyAbsent reports, without starting anything, why no server can be had, or nil.
func plainlyAbsent() error {
	if os.Getenv(EnvURL) != "" {
		return nil
	}
	if _, err := findBinDir(); err != nil {
		return err
	}
	_, err := serverUser()
	return err
}

// ensure starts (or finds) the server the first time a test asks for a database, so test
// binaries whose tests never ask start nothing.
func ensure() error {
	mu.Lock()
	defer mu.Unlock()
	if started {
		return absent
	}
	started = true
	mode, err := poolerMode()
	if err != nil {
		absent = err
		return absent
	}
	poolMode = mode
	if u := os.Getenv(EnvURL); u != "" {
		adminURL = u
		absent = prepareTemplate(u, false)
		if absent == nil && poolMode != "" {
			absent = ensurePoolerLocked()
		}
		return absent
	}
	c, err := startCluster()
	if err != nil {
		absent = fmt.Errorf("no PostgreSQL for tests: %w", err)
		return absent
	}
	own, adminURL = c, c.url
	if err := prepareTemplate(c.url, true); err != nil {
		absent = err
	}
	if absent == nil && poolMode != "" {
		absent = ensurePoolerLocked()
	}
	return absent
}

// ensurePoolerLocked starts PgBouncer in front of the server the first time it is asked
// for. mu is held.
func ensurePoolerLocked() error {
	if !bouncerTold {
		bouncerTold = true
		bouncer, bouncerErr = startPooler(adminURL)
		if bouncerErr != nil {
			bouncerErr = fmt.Errorf("no PgBouncer for tests: %w", bouncerErr)
		}
	}
	return bouncerErr
}

func shutdown() {
	mu.Lock()
	defer mu.Unlock()
	if bouncer != nil {
		bouncer.stop()
		bouncer.remove()
		bouncer = nil
	}
	if own != nil {
		own.stop()
		own.remove()
		own = nil
		return
	}
	if started && absent == nil {
		// A shared server keeps running: remove only what this process made there.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, adminURL); err == nil {
			for _, name := range append(prepared, template()) {
				conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			}
			conn.Close(ctx)
		}
	}
}

// waitAccepting retries a connection until the server is ready or the deadline passes: a
// listening socket comes before the end of recovery.
func waitAccepting(u string, deadline time.Time) error {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, u)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("connecting to the test cluster: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// prepareTemplate creates the empty template database. On our own cluster it is created
// once; on a shared server a per-process template keeps parallel test binaries apart.
func prepareTemplate(admin string, ownCluster bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", redact(admin), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{template()}.Sanitize()+" TEMPLATE template0"); err != nil {
		if ownCluster || !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("creating the template database: %w", err)
		}
	}
	return nil
}

func template() string {
	if own != nil {
		return templateName
	}
	return fmt.Sprintf("%s_%d", templateName, os.Getpid())
}

// Database is one fresh, empty database that belongs to one test.
type Database struct {
	// Name is the database's name.
	Name string
	// URL connects to it as a superuser: through PgBouncer when EnvPgBouncer is set (or the
	// database came from NewPooledDatabase), straight to the server otherwise.
	URL string
	// DirectURL connects to it as a superuser straight to the server, never through a
	// pooler: for what a pooler in transaction mode cannot carry (LISTEN, a session lock
	// held across transactions) and for looking behind it.
	DirectURL string
}

// NewDatabase creates a fresh, empty database for t and drops it when t ends. Without a
// server it skips t, or fails it under CI=true.
func NewDatabase(t testing.TB) *Database {
	t.Helper()
	requireServer(t)
	return copyDatabase(t, template())
}

// requireServer skips t, or fails it under CI=true, when there is no server.
func requireServer(t testing.TB) {
	t.Helper()
	if err := ensure(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: %v (CI=true: a missing database fails the build)", err)
		}
		t.Skipf("pgtest: skipped, %v", err)
	}
}

// copyDatabase creates a database for t as a copy of from, dropped when t ends.
func copyDatabase(t testing.TB, from string) *Database {
	t.Helper()
	name := fmt.Sprintf("once_t_%d_%d", os.Getpid(), counter.Add(1))
	if err := createDatabase(name, from); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { dropDatabase(t, name) })
	d := &Database{Name: name, URL: withDatabase(adminURL, name), DirectURL: withDatabase(adminURL, name)}
	if poolMode != "" {
		d.URL = bouncer.url(name, poolMode)
	}
	return d
}

// NewPooledDatabase creates a fresh, empty database for t, as NewDatabase does, whose URL
// goes through PgBouncer in transaction pooling mode whatever EnvPgBouncer says, and asks
// pgx for mode as its default_query_exec_mode (pgx's own default when mode is empty). The
// pooler is started the first time a test asks. Without PgBouncer (or PostgreSQL) it skips
// t, or fails it under CI=true.
func NewPooledDatabase(t testing.TB, mode string) *Database {
	t.Helper()
	requireServer(t)
	mu.Lock()
	err := ensurePoolerLocked()
	mu.Unlock()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: %v (CI=true: a missing pooler fails the build)", err)
		}
		t.Skipf("pgtest: skipped, %v", err)
	}
	d := copyDatabase(t, template())
	d.URL = bouncer.url(d.Name, mode)
	return d
}

// Pooled reports whether EnvPgBouncer routes every test database through PgBouncer, and
// with which query exec mode.
func Pooled() (mode string, ok bool) {
	m, err := poolerMode()
	return m, err == nil && m != ""
}

// createDatabase copies the database from as name.
func createDatabase(name, from string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", redact(adminURL), err)
	}
	defer conn.Close(ctx)
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{from}.Sanitize()
	if own != nil {
		// Copying files beats WAL-logging them for a small template on a cluster with
		// fsync off.
		create += " STRATEGY FILE_COPY"
	}
	// Two copies of one template at the same instant collide on its lock (55006): retry.
	for attempt := 0; ; attempt++ {
		_, err = conn.Exec(ctx, create)
		if err == nil || attempt == 50 || !strings.Contains(err.Error(), "is being accessed by other users") {
			break
		}
		time.Sleep(time.Duration(5+attempt) * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("creating database %s: %w", name, err)
	}
	return nil
}

// Prepared is a database set up once per test binary (migrations applied, fixtures loaded)
// that tests get copies of: each test pays for a file copy, not for the setup.
type Prepared struct {
	name  string
	setup func(ctx context.Context, url string) error
	once  sync.Once
	db    string // the set-up database the copies are made from
	err   error
}

// Prepare declares a prepared database: setup runs on a fresh, empty database the first time
// a test asks for a copy, and must close its connections before it returns. name tells
// prepared databases apart (lower-case letters, digits, underscores).
func Prepare(name string, setup func(ctx context.Context, url string) error) *Prepared {
	return &Prepared{name: name, setup: setup}
}

// NewDatabase returns a copy of the prepared database for t, dropped when t ends. A setup
// that failed fails every test that asks.
func (p *Prepared) NewDatabase(t testing.TB) *Database {
	t.Helper()
	requireServer(t)
	p.once.Do(p.build)
	if p.err != nil {
		t.Fatalf("pgtest: preparing database %q: %v", p.name, p.err)
	}
	return copyDatabase(t, p.db)
}

// New returns a pool of up to 16 connections to a copy of the prepared database.
func (p *Prepared) New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return p.NewDatabase(t).Pool(t, 16)
}

func (p *Prepared) build() {
	p.db = fmt.Sprintf("%s_%s", template(), p.name)
	if err := createDatabase(p.db, template()); err != nil {
		p.err = err
		return
	}
	mu.Lock()
	prepared = append(prepared, p.db)
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.setup(ctx, withDatabase(adminURL, p.db)); err != nil {
		p.err = fmt.Errorf("setup: %w", err)
		return
	}
	// A copy needs a template nobody is connected to: end what setup left open.
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		p.err = fmt.Errorf("connecting to close setup's connections: %w", err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", p.db); err != nil {
		p.err = fmt.Errorf("closing setup's connections: %w", err)
	}
}

func dropDatabase(t testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Errorf("pgtest: connecting to drop %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Errorf("pgtest: dropping database %s: %v", name, err)
	}
}

// Pool opens a pool of up to maxConns connections to the database, closed when t ends.
func (d *Database) Pool(t testing.TB, maxConns int) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(d.URL)
	if err != nil {
		t.Fatalf("pgtest: parsing %s: %v", redact(d.URL), err)
	}
	cfg.MaxConns = int32(maxConns)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pgtest: opening pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// New creates a fresh database for t and returns a pool of up to 16 connections to it. Tests
// that need more connections at once use NewDatabase(t).Pool(t, n).
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return NewDatabase(t).Pool(t, 16)
}

// withDatabase returns u with its database replaced by name.
func withDatabase(u, name string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme == "" {
		// A keyword/value connection string: a later dbname wins.
		return u + " dbname=" + name
	}
	parsed.Path = "/" + name
	return parsed.String()
}

// redact hides a password in a URL before it is printed.
func redact(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.User == nil {
		return u
	}
	if _, has := parsed.User.Password(); has {
		parsed.User = url.UserPassword(parsed.User.Username(), "xxxxx")
	}
	return parsed.String()
}
