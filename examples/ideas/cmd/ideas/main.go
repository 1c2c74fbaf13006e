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
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/ideas"
	"github.com/oncekit/once/examples/internal/serve"
	"github.com/oncekit/once/examples/internal/standin"
)

func main() { serve.Main("ideas", run) }

// run is the command, minus the process: it serves until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error {
	logger, fs, addr := serve.Flags("ideas", logw)
	workers := fs.Int("workers", 2, "how many workers take jobs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *workers < 1 {
		return fmt.Errorf("-workers %d: want at least 1", *workers)
	}

	db, err := serve.Database(ctx, getenv, func(ctx context.Context, db *pgxpool.Pool) error {
		if err := ideas.Migrate(ctx, db); err != nil {
			return err
		}
		return ideas.CreateOrganisation(ctx, db, 1, "Example organisation")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	api := standin.Start(getenv, "MODEL_URL", "model API", logger)
	defer api.Stop()
	model := &ideas.Model{BaseURL: api.URL, HTTP: &http.Client{Timeout: time.Minute}}

	var work []func(context.Context) error
	for range *workers {
		w := ideas.NewWorker(db, model)
		work = append(work, func(ctx context.Context) error { return w.Run(ctx, time.Second) })
	}
	return serve.Run(ctx, logger, *addr, ideas.New(db, model).Handler(), work...)
}
