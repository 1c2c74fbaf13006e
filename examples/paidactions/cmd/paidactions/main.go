// Command paidactions runs the paid-actions editor: its HTTP API and its worker (which
// also runs the recovery job) against the PostgreSQL named by DATABASE_URL.
//
//	DATABASE_URL=postgres://... paidactions [-addr 127.0.0.1:8080] [-provider URL]
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
	flag.Parse()
	if err := run(*addr, *provider); err != nil {
		log.Fatal(err)
	}
}

func run(addr, providerURL string) error {
	dsn := os.Getenv("DATABASE_URL")
	if dsn == "" {
		return errors.New("DATABASE_URL is not set")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer pool.Close()
	if err := paidactions.Migrate(ctx, pool); err != nil {
		return err
	}
	if providerURL == "" {
		fake := fakeprovider.Start()
		defer func() {
			fake.Close()
			log.Printf("fake provider: %d requests, %d effects, %d replays", fake.Requests(), fake.Effects(), fake.Replays())
		}()
		providerURL = fake.URL
		log.Printf("fake model provider on %s", providerURL)
	}

	worker := &paidactions.Worker{DB: pool, Provider: &paidactions.Client{BaseURL: providerURL}}
	workerDone := make(chan error, 1)
	go func() { workerDone <- worker.Run(ctx, time.Second) }()

	srv := &http.Server{Addr: addr, Handler: paidactions.NewServer(pool), ReadHeaderTimeout: 10 * time.Second}
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.ListenAndServe() }()
	log.Printf("paid actions editor on http://%s", addr)

	select {
	case err := <-serveDone:
		return fmt.Errorf("serving: %w", err)
	case err := <-workerDone:
		if err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
