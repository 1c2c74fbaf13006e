// Command onceui serves once's operator console (package onceui) for a database URL.
//
//	onceui -db postgres://... [-listen 127.0.0.1:8089] [-actions] [-credentials file]
//
// It listens on 127.0.0.1 by default, and refuses to listen on any other address unless
// credentials are configured: from the file -credentials names (one line, user:password),
// or from ONCEUI_USER and ONCEUI_PASSWORD. With credentials, every request needs them
// (HTTP basic authentication, compared in constant time), and the user is the audit's
// actor. It is read-only unless -actions is given; without credentials, actions are taken
// as the operating system's user.
//
// The database URL comes from -db, else ONCE_DATABASE_URL, else DATABASE_URL.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/runtime/onceui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "onceui:", err)
		os.Exit(2)
	}
}

// credentials are the one user and password the command accepts.
type credentials struct{ user, password string }

// run is the command: it returns when ctx ends or the server fails. ready, when not nil,
// receives the address listened on.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("onceui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := fs.String("db", "", "the database URL (default $ONCE_DATABASE_URL, else $DATABASE_URL)")
	listen := fs.String("listen", "127.0.0.1:8089", "the address to listen on; other than loopback only with credentials")
	actions := fs.Bool("actions", false, "allow actions (resolve, rearm, refund, ...); read-only without it")
	credFile := fs.String("credentials", "", "a file holding user:password for basic authentication (or $ONCEUI_USER and $ONCEUI_PASSWORD)")
	base := fs.String("base", "", "the path to serve the console under, e.g. /once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	creds, err := loadCredentials(*credFile, getenv)
	if err != nil {
		return err
	}
	if err := checkListen(*listen, creds); err != nil {
		return err
	}
	url := *dbURL
	for _, v := range []string{"ONCE_DATABASE_URL", "DATABASE_URL"} {
		if url == "" {
			url = getenv(v)
		}
	}
	if url == "" {
		return errors.New("no database: give -db, or set ONCE_DATABASE_URL or DATABASE_URL")
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("database URL: %w", err)
	}
	defer pool.Close()
	actor := func(*http.Request) string { return "" }
	if creds != nil {
		actor = func(r *http.Request) string { u, _, _ := r.BasicAuth(); return u }
	} else if u, err := user.Current(); err == nil {
		name := "local:" + u.Username
		actor = func(*http.Request) string { return name }
	}
	h, err := onceui.New(onceui.Config{DB: pool, ReadOnly: !*actions, User: actor, BasePath: strings.TrimSuffix(*base, "/")})
	if err != nil {
		return err
	}
	if creds != nil {
		h = basicAuth(*creds, h)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	mode := "read-only"
	if *actions {
		mode = "actions allowed"
	}
	fmt.Fprintf(stderr, "onceui: serving http://%s%s/ (%s)\n", ln.Addr(), *base, mode)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}

// loadCredentials reads the credentials from file, else from the environment; nil when
// neither has any.
func loadCredentials(file string, getenv func(string) string) (*credentials, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("credentials: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		u, p, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if !ok || u == "" || p == "" {
			return nil, fmt.Errorf("credentials: %s: want one line user:password with neither empty", file)
		}
		return &credentials{u, p}, nil
	}
	u, p := getenv("ONCEUI_USER"), getenv("ONCEUI_PASSWORD")
	switch {
	case u == "" && p == "":
		return nil, nil
	case u == "" || p == "":
		return nil, errors.New("credentials: ONCEUI_USER and ONCEUI_PASSWORD must be set together")
	}
	return &credentials{u, p}, nil
}

// checkListen refuses an address other than loopback without credentials: the console
// shows keys and results and, with -actions, changes them.
func checkListen(addr string, creds *credentials) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if creds != nil {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("refusing to listen on %q without credentials: anyone who reaches it could read once's rows; "+
		"listen on 127.0.0.1, or give -credentials or ONCEUI_USER and ONCEUI_PASSWORD", addr)
}

// basicAuth lets through only requests that carry c, compared in constant time (digests of
// equal length, so neither the content nor the length of a guess shows in the timing).
func basicAuth(c credentials, next http.Handler) http.Handler {
	wantUser, wantPass := sha256.Sum256([]byte(c.user)), sha256.Sum256([]byte(c.password))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		gotUser, gotPass := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
		userOK := subtle.ConstantTimeCompare(gotUser[:], wantUser[:])
		passOK := subtle.ConstantTimeCompare(gotPass[:], wantPass[:])
		if !ok || userOK&passOK != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="once", charset="UTF-8"`)
			http.Error(w, "onceui: credentials required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
