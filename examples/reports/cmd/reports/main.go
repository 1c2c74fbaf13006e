// Command reports runs the reports example: its HTTP API and its worker, against the
// PostgreSQL database named by DATABASE_URL.
//
// Usage:
//
//	DATABASE_URL=postgres://... reports [-addr :8080] [-model URL] [-mail URL] [-account id:email:token]
//
// Without -model or -mail, a stand-in provider (once's fake paid API, which counts effects
// and honours Idempotency-Key) is started on loopback for each, and its address printed.
// -account creates an account to call the API with, if it does not exist yet.
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
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/examples/reports"
	"github.com/oncekit/once/internal/fakeprovider"
)

func main() {
	log.SetFlags(0)
	if err := run(); err != nil {
		log.Fatalf("reports: %v", err)
	}
}

func run() error {
	addr := flag.String("addr", "localhost:8080", "address to serve the API on")
	modelURL := flag.String("model", "", "base URL of the model provider (default: a local stand-in)")
	mailURL := flag.String("mail", "", "base URL of the email service (default: a local stand-in)")
	account := flag.String("account", "", "create the account id:email:token if it does not exist")
	every := flag.Duration("work-every", time.Second, "how often the worker looks for queued jobs and due emails")
	flag.Parse()

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
	if err := reports.Migrate(ctx, pool); err != nil {
		return err
	}
	model := &reports.Provider{BaseURL: *modelURL, Dedupes: true}
	mail := &reports.Provider{BaseURL: *mailURL, Dedupes: true}
	for _, p := range []struct {
		name string
		to   *reports.Provider
	}{{"model", model}, {"email", mail}} {
		if p.to.BaseURL == "" {
			fake := fakeprovider.Start()
			defer fake.Close()
			p.to.BaseURL = fake.URL
			log.Printf("reports: stand-in %s provider at %s", p.name, fake.URL)
		}
	}
	app, err := reports.New(reports.Config{DB: pool, Model: model, Mail: mail})
	if err != nil {
		return err
	}
	if *account != "" {
		parts := strings.SplitN(*account, ":", 3)
		if len(parts) != 3 {
			return fmt.Errorf("-account %q: want id:email:token", *account)
		}
		if err := app.AddAccount(ctx, parts[0], parts[1], parts[2]); err != nil {
			return err
		}
	}

	srv := &http.Server{Addr: *addr, Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 2)
	go func() { errs <- app.Run(ctx, *every) }()
	go func() { errs <- srv.ListenAndServe() }()
	log.Printf("reports: serving on http://%s", *addr)
	select {
	case err = <-errs:
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdown); err == nil || errors.Is(err, http.ErrServerClosed) {
		err = serr
	}
	return err
}
