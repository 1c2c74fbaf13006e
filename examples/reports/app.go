package reports

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/oncehttp"
	"github.com/oncekit/once/runtime/onceops"
)

// Config is what the app needs.
type Config struct {
	// DB is the app's database, migrated with Migrate.
	DB *pgxpool.Pool
	// Model is the model provider that writes reports; Mail the email service.
	Model, Mail *Provider
	// Retain is how long an operation reference is remembered: a retry within it gets the
	// first answer, a retry after it is a new request. Zero means a day: clients retry
	// within minutes, and a day covers an integration that retries after an outage.
	Retain time.Duration
	// EmailBackoff is the wait before a failed email is tried again (doubling each time);
	// zero means 10 seconds.
	EmailBackoff time.Duration
}

// App is the reports service: its HTTP API and its worker.
type App struct {
	db          *pgxpool.Pool
	model, mail *Provider
	front       func(http.Handler) http.Handler
	drain       onceops.Drain
}

// New returns the app cfg describes.
func New(cfg Config) (*App, error) {
	if cfg.DB == nil || cfg.Model == nil || cfg.Mail == nil {
		return nil, errors.New("reports: Config.DB, Model and Mail are required")
	}
	app := &App{db: cfg.DB, model: cfg.Model, mail: cfg.Mail}
	front, err := oncehttp.New(oncehttp.Config{
		DB:   cfg.DB,
		Name: "reports.api",
		// Keys are scoped to the account the bearer token names, never to one the body
		// claims.
		Account: func(r *http.Request) (string, error) {
			acct, err := app.account(r)
			return acct.ID, err
		},
		Required: true,
		Retain:   cfg.Retain,
		// A request that died mid-way only recorded a job, whose insert is its own check.
		RepeatSafe: true,
	})
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	app.front = front
	app.drain = onceops.Drain{
		Deliver: map[string]func(context.Context, onceops.FollowUp) error{ActionEmailOwner: app.deliverEmail},
		Backoff: cfg.EmailBackoff,
	}
	return app, nil
}

// Handler is the app's HTTP API:
//
//	POST /submissions                 {"title", "body"}: a submission to report on
//	POST /submissions/{id}/reports    {"tone", "sections"}: queue a report (202, the job)
//	POST /reports/{id}/regenerate     {"tone", "sections"}: queue a new report in its place
//	GET  /jobs/{id}                   a job's state, and its report once done
//	GET  /reports/{id}                a report
//	GET  /usage                       the account's reports and tokens used
//
// Every call carries "Authorization: Bearer TOKEN"; every POST an Idempotency-Key, the same
// on each retry of one intention.
func (app *App) Handler() http.Handler {
	mux := http.NewServeMux()
	// Each POST is checked first, then goes through the front door: one operation per
	// account and Idempotency-Key.
	mux.Handle("POST /submissions", validated[submission](app.front(http.HandlerFunc(app.handleSubmit))))
	mux.Handle("POST /submissions/{id}/reports", validated[ReportInput](app.front(http.HandlerFunc(app.handleGenerate))))
	mux.Handle("POST /reports/{id}/regenerate", validated[ReportInput](app.front(http.HandlerFunc(app.handleRegenerate))))
	mux.HandleFunc("GET /jobs/{id}", app.handleJob)
	mux.HandleFunc("GET /reports/{id}", app.handleReport)
	mux.HandleFunc("GET /usage", app.handleUsage)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One request scope for the account lookup the front door and the handler share.
		mux.ServeHTTP(w, r.WithContext(once.WithRequestScope(r.Context())))
	})
}

// Run runs the worker until ctx ends: a pass every interval, and a sweep of expired
// operation references once an hour.
func (app *App) Run(ctx context.Context, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var reaped time.Time
	for {
		if _, err := app.Work(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		if time.Since(reaped) > time.Hour {
			if _, err := onceops.ReapExpired(ctx, app.db, 0); err != nil && ctx.Err() == nil {
				return fmt.Errorf("reaping expired operations: %w", err)
			}
			reaped = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
