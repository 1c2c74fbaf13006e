// Package serve is what the examples' commands share: main's signals and exit (Main), the
// flags and log every command has (Flags), the database named by DATABASE_URL, migrated at
// start (Database), and an HTTP server with the app's workers beside it, stopped together
// when the command's context ends (Run).
package serve

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
)

// Main runs a command as its main function: run gets the process's arguments, its
// environment and standard error for its log, and a context that SIGINT or SIGTERM ends.
// If run fails, Main says why and exits 1.
func Main(name string, run func(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Flags returns the command's log (prefixed with its name) and its flag set, which writes
// its usage to the log and holds the flag every example has: -addr, where to serve
// (127.0.0.1:8080 unless given).
func Flags(name string, logw io.Writer) (logger *log.Logger, fs *flag.FlagSet, addr *string) {
	logger = log.New(logw, name+": ", log.LstdFlags)
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(logw)
	addr = fs.String("addr", "127.0.0.1:8080", "address to serve on")
	return logger, fs, addr
}

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
