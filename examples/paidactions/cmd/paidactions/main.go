// Command paidactions runs the paid-actions editor: its HTTP API and its worker (which
// also runs the recovery job) against the PostgreSQL named by DATABASE_URL.
//
//	DATABASE_URL=postgres://... paidactions [-addr 127.0.0.1:8080] [-provider URL] [-work-every 1s]
//
// Without -provider (or PROVIDER_URL) it starts the fake model provider on loopback and
// logs how many effects it performed when it stops.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/examples/paidactions"
	"github.com/oncekit/once/internal/fakeprovider"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	provider := flag.String("provider", os.Getenv("PROVIDER_URL"), "model provider base URL (default: a fake provider on loopback)")
	every := flag.Duration("work-every", time.Second, "how often the worker looks for queued actions and lost answers")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, config{dsn: os.Getenv("DATABASE_URL"), addr: *addr, provider: *provider, every: *every}, nil); err != nil {
		log.Fatal(err)
	}
}

type config struct {
	dsn, addr, provider string
	every               time.Duration
}

// run serves until ctx ends. ready, when not nil, receives the address served once the
// listener is open.
func run(ctx context.Context, cfg config, ready chan<- string) error {
	if cfg.dsn == "" {
		return errors.New("DATABASE_URL is not set")
	}
	pool, err := pgxpool.New(ctx, cfg.dsn)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer pool.Close()
	if err := paidactions.Migrate(ctx, pool); err != nil {
		return err
	}
	providerURL := cfg.provider
	if providerURL == "" {
		fake := fakeprovider.Start()
		defer func() {
			fake.Close()
			log.Printf("fake provider: %d requests, %d effects, %d replays", fake.Requests(), fake.Effects(), fake.Replays())
		}()
		providerURL = fake.URL
		log.Printf("fake model provider on %s", providerURL)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	worker := &paidactions.Worker{DB: pool, Provider: &paidactions.Client{BaseURL: providerURL}}
	workerDone := make(chan error, 1)
	go func() { workerDone <- worker.Run(ctx, cfg.every) }()
	srv := &http.Server{Handler: paidactions.NewServer(pool), ReadHeaderTimeout: 10 * time.Second}
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	log.Printf("paid actions editor on http://%s", ln.Addr())
	if ready != nil {
		ready <- ln.Addr().String()
	}

	var failed error
	select {
	case err := <-serveDone:
		failed = fmt.Errorf("serving: %w", err)
	case err := <-workerDone:
		if err != nil {
			failed = fmt.Errorf("worker: %w", err)
		}
		workerDone <- nil
	case <-ctx.Done():
	}
	cancel()
	shutdown, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	err = srv.Shutdown(shutdown)
	<-workerDone // the worker settles what it holds before the pool closes
	return errors.Join(failed, err)
}
