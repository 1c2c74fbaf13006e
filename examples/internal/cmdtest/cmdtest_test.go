package cmdtest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/oncekit/once/examples/internal/cmdtest"
)

// hello is a command in the examples' shape: it serves "hello, NAME" on -addr until its
// context ends.
func hello(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error {
	if len(args) != 2 || args[0] != "-addr" {
		return fmt.Errorf("usage: hello -addr ADDR")
	}
	ln, err := net.Listen("tcp", args[1])
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s", getenv("NAME"))
	})}
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Fprintf(logw, "hello: serving on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(logw, "hello: stopped")
	return nil
}

func TestStart_ServesUntilStopped(t *testing.T) {
	t.Parallel()
	c := cmdtest.Start(t, hello, []string{"-addr", "127.0.0.1:0"}, map[string]string{"NAME": "tests"})
	resp, err := http.Get(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello, tests" {
		t.Fatalf("GET %s: %q", c.URL, body)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(c.Log(), "hello: stopped\n") {
		t.Fatalf("log %q, want the command's last word", c.Log())
	}
}

// recorder is a test that keeps its failure instead of failing.
type recorder struct {
	*testing.T
	fatal string
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	panic(r)
}

// A command that stops before it serves fails the test with what it returned.
func TestStart_ACommandThatStopsFailsTheTest(t *testing.T) {
	t.Parallel()
	r := &recorder{T: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		cmdtest.Start(r, hello, nil, nil)
	}()
	if !strings.Contains(r.fatal, "stopped before serving: usage: hello -addr ADDR") {
		t.Fatalf("failure %q, want the command's error", r.fatal)
	}
}
