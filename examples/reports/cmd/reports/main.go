// Command reports runs the reports example: its HTTP API and its worker, against the
// PostgreSQL database named by DATABASE_URL, migrated at start.
//
// Usage:
//
//	DATABASE_URL=postgres://... [MODEL_URL=http://...] [MAIL_URL=http://...] \
//		reports [-addr 127.0.0.1:8080] [-account id:email:token] [-work-every 1s]
//
// MODEL_URL and MAIL_URL name the model provider and the email service. Each one not set
// gets a local fake on loopback (which honours Idempotency-Key), and when the command stops
// it logs what each fake performed, so the app can be tried with nothing but PostgreSQL.
// -account creates an account to call the API with, if it does not exist yet. SIGINT or
// SIGTERM stops it.
package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/oncekit/once/examples/internal/serve"
	"github.com/oncekit/once/examples/internal/standin"
	"github.com/oncekit/once/examples/reports"
)

func main() { serve.Main("reports", run) }

// run is the command, minus the process: it serves until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error {
	logger, fs, addr := serve.Flags("reports", logw)
	account := fs.String("account", "", "create the account id:email:token if it does not exist")
	every := fs.Duration("work-every", time.Second, "how often the worker looks for queued jobs and due emails")
	if err := fs.Parse(args); err != nil {
		return err
	}

	db, err := serve.Database(ctx, getenv, reports.Migrate)
	if err != nil {
		return err
	}
	defer db.Close()
	model := standin.Start(getenv, "MODEL_URL", "model API", logger)
	defer model.Stop()
	mail := standin.Start(getenv, "MAIL_URL", "email API", logger)
	defer mail.Stop()
	app, err := reports.New(reports.Config{
		DB:    db,
		Model: &reports.Provider{BaseURL: model.URL, Dedupes: true},
		Mail:  &reports.Provider{BaseURL: mail.URL, Dedupes: true},
	})
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

	return serve.Run(ctx, logger, *addr, app.Handler(), func(ctx context.Context) error { return app.Run(ctx, *every) })
}
