// Command ideas runs the ideas example app: its HTTP server and a worker, on the PostgreSQL
// database named by DATABASE_URL, spending on the paid API at MODEL_API_URL.
//
// Usage:
//
//	DATABASE_URL=postgres://... MODEL_API_URL=http://... ideas [-addr 127.0.0.1:8080] [-workers 2]
//
// Without MODEL_API_URL it starts a local fake of the paid API on loopback and prints how many
// effects it performed when it stops, so the app can be tried with nothing but PostgreSQL.
// It applies its migrations at start, and creates organisation 1 if it is missing.
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
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/ideas"
	"github.com/oncekit/once/internal/fakeprovider"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("ideas: %v", err)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve on")
	workers := flag.Int("workers", 2, "how many workers take jobs")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dsn := os.Getenv("DATABASE_URL")
	if dsn == "" {
		return errors.New("DATABASE_URL is not set: name the PostgreSQL database to use")
	}
	db, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connecting to DATABASE_URL: %w", err)
	}
	defer db.Close()
	if err := ideas.Migrate(ctx, db); err != nil {
		return err
	}
	if err := ideas.CreateOrganisation(ctx, db, 1, "Example organisation"); err != nil {
		return err
	}

	api := os.Getenv("MODEL_API_URL")
	if api == "" {
		fake := fakeprovider.Start()
		defer func() {
			fake.Close()
			log.Printf("the fake paid API performed %d effects (research %d, ideas %d, refinements %d)",
				fake.Effects(), fake.EffectsAt("/v1/research"), fake.EffectsAt("/v1/ideas"), fake.EffectsAt("/v1/refine"))
		}()
		api = fake.URL
		log.Printf("MODEL_API_URL is not set: spending on a local fake at %s", api)
	}
	model := &ideas.Model{BaseURL: api, HTTP: &http.Client{Timeout: time.Minute}}
	app := ideas.New(db, model)

	var wg sync.WaitGroup
	for range *workers {
		w := ideas.NewWorker(db, model)
		wg.Go(func() {
			if err := w.Run(ctx, time.Second); err != nil {
				log.Printf("worker: %v", err)
				stop()
			}
		})
	}

	srv := &http.Server{Addr: *addr, Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	log.Printf("serving on http://%s (try: curl -i -X POST http://%s/orgs/1/runs)", *addr, *addr)
	err = srv.ListenAndServe()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
