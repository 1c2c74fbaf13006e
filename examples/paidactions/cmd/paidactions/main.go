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
	"io"
	"time"

	"github.com/oncekit/once/examples/internal/serve"
	"github.com/oncekit/once/examples/internal/standin"
	"github.com/oncekit/once/examples/paidactions"
)

func main() { serve.Main("paidactions", run) }

// run is the command, minus the process: it serves until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error {
	logger, fs, addr := serve.Flags("paidactions", logw)
	every := fs.Duration("work-every", time.Second, "how often the worker looks for queued actions and lost answers")
	if err := fs.Parse(args); err != nil {
		return err
	}

	db, err := serve.Database(ctx, getenv, paidactions.Migrate)
	if err != nil {
		return err
	}
	defer db.Close()
	model := standin.Start(getenv, "MODEL_URL", "model API", logger)
	defer model.Stop()

	worker := &paidactions.Worker{DB: db, Provider: &paidactions.Client{BaseURL: model.URL}}
	return serve.Run(ctx, logger, *addr, paidactions.NewServer(db), func(ctx context.Context) error { return worker.Run(ctx, *every) })
}
