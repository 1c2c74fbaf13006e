// Command paidactions runs the paid-actions editor: its HTTP API and its worker (which also
// runs the recovery job), against the PostgreSQL database named by DATABASE_URL, migrated at
// start.
//
// Usage:
//
//	DATABASE_URL=postgres://... [MODEL_URL=http://...] paidactions [-addr 127.0.0.1:8080] [-work-every 1s]
//
// MODEL_URL names the model provider. Without it the command starts a local fake on
// loopback (which honours Idempotency-Key), and when it stops it logs what the fake
// performed, so the editor can be tried with nothing but PostgreSQL. SIGINT or SIGTERM
// stops it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/standin"
	"github.com/oncekit/once/examples/paidactions"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "paidactions:", err)
		os.Exit(1)
	}
}

// run is the command, minus the process: it serves until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error {
	logger := log.New(logw, "paidactions: ", log.LstdFlags)
	fs := flag.NewFlagSet("paidactions", flag.ContinueOnError)
	fs.SetOutput(logw)
	addr := fs.String("addr", "127.0.0.1:8080", "address to serve on")
	every := fs.Duration("work-every", time.Second, "how often the worker looks for queued actions and lost answers")
	if err := fs.Parse(args); err != nil {
		return err
	}

	dsn := getenv("DATABASE_URL")
	if dsn == "" {
		return errors.New("DATABASE_URL is not set: name the PostgreSQL database to use")
	}
	db, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer db.Close()
	if err := paidactions.Migrate(ctx, db); err != nil {
		return err
	}
	model := standin.Start(getenv, "MODEL_URL", "model API", logger)
	defer model.Stop()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	worker := &paidactions.Worker{DB: db, Provider: &paidactions.Client{BaseURL: model.URL}}
	worked := make(chan error, 1)
	go func() {
		err := worker.Run(ctx, *every)
		cancel() // a worker that stopped stops the server too
		worked <- err
	}()
	srv := &http.Server{Handler: paidactions.NewServer(db), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		srv.Shutdown(shutdown)
	}()
	logger.Printf("serving on http://%s", ln.Addr())
	served := srv.Serve(ln)
	if errors.Is(served, http.ErrServerClosed) {
		served = nil
	}
	cancel()
	// The worker settles what it holds before the pool closes.
	if err := <-worked; err != nil {
		return errors.Join(served, fmt.Errorf("worker: %w", err))
	}
	return served
}
