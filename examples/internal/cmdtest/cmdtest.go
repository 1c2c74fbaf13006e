// Package cmdtest runs an example's command in-process for a test, the way its main runs
// it: the command's run function gets the flags, the environment and a log, serves until
// its context ends, and says where it serves in its log ("serving on http://ADDR"). Stop
// cancels the context, as SIGINT and SIGTERM do in main.
package cmdtest

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"sync"
	"testing"
	"time"
)

// Run is an example command without its process: it serves until ctx ends.
type Run func(ctx context.Context, args []string, getenv func(string) string, logw io.Writer) error

// Command is a command running in-process.
type Command struct {
	// URL is where the command serves, as its log says.
	URL string

	t      testing.TB
	log    *Log
	cancel context.CancelFunc
	done   chan error
}

var servingRE = regexp.MustCompile(`serving on (http://[0-9A-Za-z.:\[\]]+)`)

// Start runs the command with args and the environment env (nothing else is set), and
// waits until it serves: 30 s at most, failing t with the command's log if it stops or
// does not serve by then. The command is stopped when t ends, if the test has not.
func Start(t testing.TB, run Run, args []string, env map[string]string) *Command {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Command{t: t, log: &Log{}, cancel: cancel, done: make(chan error, 1)}
	go func() { c.done <- run(ctx, args, func(k string) string { return env[k] }, c.log) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-c.done:
		case <-time.After(15 * time.Second):
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c.URL = ServingURL(c.log.String()); c.URL != "" {
			return c
		}
		select {
		case err := <-c.done:
			c.done <- err
			t.Fatalf("cmdtest: the command stopped before serving: %v\n%s", err, c.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("cmdtest: the command did not serve within 30s:\n%s", c.log)
		}
	}
}

// ServingURL returns where a command's log says it serves, or "" if it has not said yet.
func ServingURL(log string) string {
	if m := servingRE.FindStringSubmatch(log); m != nil {
		return m[1]
	}
	return ""
}

// Log returns what the command has logged so far.
func (c *Command) Log() string { return c.log.String() }

// Stop ends the command's context, as a signal does in main, and returns what the command
// returned. It fails the test if the command takes more than 15 s to stop.
func (c *Command) Stop() error {
	c.t.Helper()
	c.cancel()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return err
	case <-time.After(15 * time.Second):
		c.t.Fatalf("cmdtest: the command did not stop within 15s:\n%s", c.log)
		return nil
	}
}

// Log is a command's log, which a test reads while the command writes it: to a Command
// started here, or to a command run as a process (as its Stdout and Stderr).
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the log.
func (b *Log) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what has been written so far.
func (b *Log) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
