// Package serve is what the examples' commands share: the database named by DATABASE_URL,
// migrated at start, and an HTTP server with the app's workers beside it, stopped together
// when the command's context ends (SIGINT or SIGTERM in main).
package serve

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Database connects to the database DATABASE_URL names, read with getenv, and migrates it.
// The caller closes the pool.
func Database(ctx context.Context, getenv func(string) string, migrate func(context.Context, *pgxpool.Pool) error) (*pgxpool.Pool, error) {
	dsn := getenv("DATABASE_URL")
	if dsn == "" {
		return nil, errors.New("DATABASE_URL is not set: name the PostgreSQL database to use")
	}
	db, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Run serves h on addr, says "serving on http://ADDR" in log, and runs each worker beside
// the server until ctx ends. A worker that returns stops the server and the other workers
// too; a server that fails stops the workers. Run returns when the server and every
// worker have stopped (the workers settle what they hold before the caller closes the
// pool), with what went wrong, if anything.
func Run(ctx context.Context, log *log.Logger, addr string, h http.Handler, workers ...func(context.Context) error) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	errs := make([]error, len(workers))
	for i, work := range workers {
		wg.Go(func() {
			if err := work(ctx); err != nil && ctx.Err() == nil {
				errs[i] = fmt.Errorf("worker: %w", err)
			}
			cancel()
		})
	}
	wg.Go(func() {
		<-ctx.Done()
		shutdown, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		srv.Shutdown(shutdown)
	})
	log.Printf("serving on http://%s", ln.Addr())
	served := srv.Serve(ln)
	if errors.Is(served, http.ErrServerClosed) {
		served = nil
	} else {
		served = fmt.Errorf("serving: %w", served)
	}
	cancel()
	wg.Wait()
	return errors.Join(append([]error{served}, errs...)...)
}
