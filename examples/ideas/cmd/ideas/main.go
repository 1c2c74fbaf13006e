// Command ideas runs the ideas example app: its HTTP server and workers, on the PostgreSQL
// database named by DATABASE_URL, paying the research and ideas API at MODEL_URL.
//
// Usage:
//
//	DATABASE_URL=postgres://... [MODEL_URL=http://...] ideas [-addr 127.0.0.1:8080] [-workers 2]
//
// Without MODEL_URL it starts a local fake of the paid API on loopback, and when it stops it
// logs the effects the fake performed, so the app can be tried with nothing but PostgreSQL.
// It applies its migrations at start and creates organisation 1 if missing. SIGINT or
// SIGTERM stops it.
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
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/ideas"
	"github.com/oncekit/once/examples/internal/standin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		log.Printf("ideas: %v", err)
		os.Exit(1)
	}
}

// run is the command, minus the process: it serves until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error {
	logger := log.New(logw, "ideas: ", log.LstdFlags)
	fs := flag.NewFlagSet("ideas", flag.ContinueOnError)
	fs.SetOutput(logw)
	addr := fs.String("addr", "127.0.0.1:8080", "address to serve on")
	workers := fs.Int("workers", 2, "how many workers take jobs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *workers < 1 {
		return fmt.Errorf("-workers %d: want at least 1", *workers)
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
	if err := ideas.Migrate(ctx, db); err != nil {
		return err
	}
	if err := ideas.CreateOrganisation(ctx, db, 1, "Example organisation"); err != nil {
		return err
	}

	api := standin.Start(getenv, "MODEL_URL", "model API", logger)
	defer api.Stop()
	model := &ideas.Model{BaseURL: api.URL, HTTP: &http.Client{Timeout: time.Minute}}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: ideas.New(db, model).Handler(), ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, *workers+1)
	for range *workers {
		w := ideas.NewWorker(db, model)
		wg.Go(func() {
			if err := w.Run(ctx, time.Second); err != nil {
				errs <- fmt.Errorf("worker: %w", err)
				stop()
			}
		})
	}
	wg.Go(func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	})
	logger.Printf("serving on http://%s (press the button: curl -i -X POST http://%s/orgs/1/runs)", ln.Addr(), ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		errs <- err
		stop()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
