package serve_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/cmdtest"
	"github.com/oncekit/once/examples/internal/serve"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// start runs serve.Run as a command would, and returns it once it serves.
func start(t *testing.T, workers ...func(context.Context) error) *cmdtest.Command {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	return cmdtest.Start(t, func(ctx context.Context, _ []string, _ func(string) string, logw io.Writer) error {
		return serve.Run(ctx, log.New(logw, "", 0), "127.0.0.1:0", h, workers...)
	}, nil, nil)
}

// The server and the workers run until the context ends; Run returns once all have
// stopped.
func TestRun_ServesWithWorkersUntilTheContextEnds(t *testing.T) {
	t.Parallel()
	stopped := make(chan struct{})
	c := start(t, func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return nil
	})
	resp, err := http.Get(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := c.Stop(); err != nil {
		t.Fatalf("Run after its context ended: %v", err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Run returned before its worker stopped")
	}
}

// A worker that fails stops the server by itself, and Run says why.
func TestRun_AFailingWorkerStopsTheServer(t *testing.T) {
	t.Parallel()
	fail := make(chan struct{})
	c := start(t, func(context.Context) error {
		<-fail
		return errors.New("the queue is gone")
	})
	close(fail)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(c.URL)
		if err != nil {
			break // the server has stopped
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server kept serving after its worker failed")
		}
	}
	if err := c.Stop(); err == nil || !strings.Contains(err.Error(), "worker: the queue is gone") {
		t.Fatalf("Run: %v, want the worker's error", err)
	}
}

// Database connects to DATABASE_URL and migrates; without it, it says what is missing.
func TestDatabase_ConnectsAndMigrates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t).URL
	migrated := false
	db, err := serve.Database(ctx, func(k string) string { return map[string]string{"DATABASE_URL": url}[k] }, func(ctx context.Context, db *pgxpool.Pool) error {
		_, err := db.Exec(ctx, `CREATE TABLE orders (id int)`)
		migrated = err == nil
		return err
	})
	if err != nil || !migrated {
		t.Fatalf("Database: %v (migrated %v)", err, migrated)
	}
	db.Close()
	if _, err := serve.Database(ctx, func(string) string { return "" }, nil); err == nil || !strings.Contains(err.Error(), "DATABASE_URL is not set") {
		t.Fatalf("Database without DATABASE_URL: %v", err)
	}
}

// Every command serves on loopback unless told otherwise, and its log and usage go to the
// writer it is given, prefixed with its name.
func TestFlags_AddrAndLogEveryCommandHas(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	logger, fs, addr := serve.Flags("ideas", &out)
	if err := fs.Parse(nil); err != nil || *addr != "127.0.0.1:8080" {
		t.Fatalf("-addr %q (%v), want 127.0.0.1:8080", *addr, err)
	}
	if err := fs.Parse([]string{"-addr", ":9090"}); err != nil || *addr != ":9090" {
		t.Fatalf("-addr :9090 gave %q (%v)", *addr, err)
	}
	if err := fs.Parse([]string{"-nope"}); err == nil || !strings.Contains(out.String(), "flag provided but not defined: -nope") {
		t.Fatalf("an unknown flag: %v, usage %q", err, out.String())
	}
	logger.Print("hello")
	if !regexp.MustCompile(`(?m)^ideas: \S+ \S+ hello$`).MatchString(out.String()) {
		t.Fatalf("log %q, want the command's name first", out.String())
	}
}
