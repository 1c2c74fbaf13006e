// Command outreach runs the outreach app: its HTTP server and its worker, against the
// PostgreSQL database named by DATABASE_URL, migrated at start.
//
// Environment:
//
//	DATABASE_URL  the database (required)
//	MAIL_URL      the email API's base URL (required)
//	SOURCE_URL    the paid places source's base URL (required)
//	BILLING_URL   the billing API's base URL (required)
//	ADDR          where to listen (default :8080)
//	PUBLIC_URL    the app's address, for links in emails (default http://localhost:8080)
//	OPERATOR      where operator alerts go (default operator@outreach.test)
//
// Run several: they share the database, and every promise the app makes holds across them.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/outreach"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, nil); err != nil {
		fmt.Fprintln(os.Stderr, "outreach:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends. getenv reads the settings; listening, if not nil, is told the
// address the server listens on.
func run(ctx context.Context, getenv func(string) string, listening chan<- string) error {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	for _, name := range []string{"DATABASE_URL", "MAIL_URL", "SOURCE_URL", "BILLING_URL"} {
		if getenv(name) == "" {
			return fmt.Errorf("%s is not set", name)
		}
	}

	db, err := pgxpool.New(ctx, getenv("DATABASE_URL"))
	if err != nil {
		return fmt.Errorf("connecting to the database: %w", err)
	}
	defer db.Close()
	if err := outreach.Migrate(ctx, db); err != nil {
		return err
	}
	app, err := outreach.New(outreach.Config{
		DB:         db,
		MailURL:    getenv("MAIL_URL"),
		SourceURL:  getenv("SOURCE_URL"),
		BillingURL: getenv("BILLING_URL"),
		PublicURL:  env("PUBLIC_URL", "http://localhost:8080"),
		Operator:   env("OPERATOR", "operator@outreach.test"),
	})
	if err != nil {
		return err
	}

	worker := make(chan struct{})
	go func() {
		defer close(worker)
		app.Worker().Run(ctx, 2*time.Second)
	}()

	srv := &http.Server{Addr: env("ADDR", ":8080"), Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	ln, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	slog.Info("outreach: listening", "addr", ln.Addr().String())
	if listening != nil {
		listening <- ln.Addr().String()
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	<-worker
	return nil
}
