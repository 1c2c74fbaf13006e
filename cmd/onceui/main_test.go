package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/onceschema"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// env is a getenv over a map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// On an address other than loopback, the command refuses to start without credentials,
// before it reaches for the database; on loopback it starts without them.
func TestRun_RefusesAnAddressBeyondLoopbackWithoutCredentials(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:8089", "example.com:80"} {
		// Were the check missing, the command would serve until ctx ends and return nil.
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		err := run(ctx, []string{"-listen", addr, "-db", "postgres://unused"}, env(nil), io.Discard, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "without credentials") {
			t.Fatalf("-listen %s without credentials: %v, want a refusal", addr, err)
		}
	}
	// Half the credentials is no credentials: refused too, saying why.
	err := run(t.Context(), []string{"-listen", "0.0.0.0:0"}, env(map[string]string{"ONCEUI_USER": "ana"}), io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "set together") {
		t.Fatalf("half the credentials: %v", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		if err := checkListen(addr, nil); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
	}
}

// start runs the command with args and env until the test ends, and returns its address.
func start(t *testing.T, args []string, getenv func(string) string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, getenv, io.Discard, ready) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case addr := <-ready:
		return addr
	case err := <-done:
		t.Fatalf("onceui %v did not start: %v", args, err)
	case <-time.After(20 * time.Second):
		t.Fatal("onceui did not start in 20 s")
	}
	return ""
}

// With credentials (from a file, or the environment) it listens beyond loopback, and a
// request with wrong or no credentials gets 401; the right ones get the page.
func TestRun_WrongCredentialsGet401(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	if err := onceschema.Migrate(t.Context(), db.Pool(t, 2)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(file, []byte("ana:s3cret pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile := start(t, []string{"-listen", "0.0.0.0:0", "-db", db.URL, "-credentials", file}, env(nil))
	fromEnv := start(t, []string{"-listen", "0.0.0.0:0", "-db", db.URL},
		env(map[string]string{"ONCEUI_USER": "ana", "ONCEUI_PASSWORD": "s3cret pass"}))
	for _, addr := range []string{fromFile, fromEnv} {
		_, port, _ := strings.Cut(addr, "]:")
		if port == "" {
			_, port, _ = strings.Cut(addr, ":")
		}
		url := "http://127.0.0.1:" + port + "/"
		for _, c := range []struct {
			user, pass string
			set        bool
			want       int
		}{
			{"", "", false, http.StatusUnauthorized},
			{"ana", "wrong", true, http.StatusUnauthorized},
			{"bob", "s3cret pass", true, http.StatusUnauthorized},
			{"ana", "s3cret pas", true, http.StatusUnauthorized},
			{"ana", "s3cret pass", true, http.StatusOK},
		} {
			req, _ := http.NewRequest("GET", url, nil)
			if c.set {
				req.SetBasicAuth(c.user, c.pass)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("%s as %q/%q: %d, want %d", url, c.user, c.pass, resp.StatusCode, c.want)
			}
			if c.want == http.StatusOK && !strings.Contains(string(body), "read-only") {
				t.Fatalf("the page does not say the console is read-only by default:\n%s", body)
			}
			if c.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		}
	}
}
