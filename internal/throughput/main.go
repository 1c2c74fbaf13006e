package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/oncekit/once/internal/pgtest"
)

func main() {
	cfg := Config{}
	flag.IntVar(&cfg.Keys, "keys", 20000, "fresh keys per scenario")
	flag.IntVar(&cfg.Storm, "storm", 1000, "attempts per storm on one key")
	flag.IntVar(&cfg.Rounds, "rounds", 5, "rounds: each runs a slice of every scenario's fresh keys and one storm of each, in a rotating order")
	flag.IntVar(&cfg.Workers, "workers", 8, "goroutines calling at once, per scenario")
	flag.IntVar(&cfg.Conns, "conns", 8, "connections in each scenario's pool")
	flag.Int64Var(&cfg.Cap, "cap", 100, "the statement guard's cap in a storm")
	kinds := flag.String("kinds", "", "comma-separated scenario kinds to run beside the floor (statement, episode, open, forever, operation, oncehttp, river); all when empty")
	dbURL := flag.String("db", "", "URL of an existing server to create the benchmark's database on (default: start a throwaway cluster with default durability)")
	flag.Parse()
	if *kinds != "" {
		cfg.Kinds = strings.Split(*kinds, ",")
	}
	if err := runMain(cfg, *dbURL); err != nil {
		fmt.Fprintln(os.Stderr, "throughput:", err)
		os.Exit(1)
	}
}

func runMain(cfg Config, dbURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	if dbURL == "" {
		srv, err := pgtest.StartServer(true)
		if err != nil {
			return err
		}
		defer srv.Stop()
		dbURL = srv.URL()
	}
	r, err := Run(ctx, dbURL, cfg, os.Stderr)
	if err != nil {
		return err
	}
	r.Print(os.Stdout)
	if !r.Exact() {
		return fmt.Errorf("a final state was not exact (see the table)")
	}
	return nil
}
