// Command outreach runs the outreach app: its HTTP server and its worker, against the
// PostgreSQL database named by DATABASE_URL, migrated at start.
//
// Usage:
//
//	DATABASE_URL=postgres://... [MAIL_URL=http://...] [SOURCE_URL=http://...] [BILLING_URL=http://...] \
//		outreach [-addr 127.0.0.1:8080] [-public-url URL] [-operator ADDRESS]
//
// MAIL_URL, SOURCE_URL and BILLING_URL name the email API, the paid places source and the
// billing API. Each one not set gets a local fake on loopback, and when the command stops
// it logs what each fake performed, so the app can be tried with nothing but PostgreSQL.
// -public-url is the app's address in the links of its emails (default: http:// and -addr);
// -operator is where operator alerts go. SIGINT or SIGTERM stops it.
//
// Run several: they share the database, and every promise the app makes holds across them.
package main

import (
	"context"
	"io"
	"time"

	"github.com/oncekit/once/examples/internal/serve"
	"github.com/oncekit/once/examples/internal/standin"
	"github.com/oncekit/once/examples/outreach"
	"github.com/oncekit/once/examples/outreach/internal/fakebilling"
)

func main() { serve.Main("outreach", run) }

// run is the command, minus the process: it serves until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error {
	logger, fs, addr := serve.Flags("outreach", logw)
	publicURL := fs.String("public-url", "", "the app's address in the links of its emails (default: http:// and -addr)")
	operator := fs.String("operator", "operator@outreach.test", "where operator alerts go")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *publicURL == "" {
		*publicURL = "http://" + *addr
	}

	db, err := serve.Database(ctx, getenv, outreach.Migrate)
	if err != nil {
		return err
	}
	defer db.Close()

	mail := standin.Start(getenv, "MAIL_URL", "email API", logger)
	defer mail.Stop()
	source := standin.Start(getenv, "SOURCE_URL", "places source", logger)
	defer source.Stop()
	billingURL := getenv("BILLING_URL")
	if billingURL == "" {
		fake := fakebilling.Start()
		defer func() {
			fake.Close()
			logger.Printf("the fake billing API performed %d plan changes", fake.Changes.Effects())
		}()
		billingURL = fake.URL
		logger.Printf("BILLING_URL is not set: the billing API is a local fake at %s", billingURL)
	}

	app, err := outreach.New(outreach.Config{
		DB:         db,
		MailURL:    mail.URL,
		SourceURL:  source.URL,
		BillingURL: billingURL,
		PublicURL:  *publicURL,
		Operator:   *operator,
	})
	if err != nil {
		return err
	}

	return serve.Run(ctx, logger, *addr, app.Handler(), func(ctx context.Context) error {
		app.Worker().Run(ctx, 2*time.Second)
		return nil
	})
}
