// Package crashtest lets a test run part of itself in a child process and kill that process
// with SIGKILL: the honest way to show what a promise does when its holder dies mid-work. A
// killed process runs no deferred release, sends no rollback, closes nothing politely; what
// is left is what the database and its clock do by themselves.
//
// The child is the test binary itself, re-executed to run only the calling test, with an
// environment variable telling it to play the child's part:
//
//	func TestLease_KilledHolderExpires(t *testing.T) {
//		if crashtest.IsChild(t) {
//			db := connect(os.Getenv("DSN"))
//			held := takeLease(db)
//			crashtest.Ready(held.Token) // tell the parent, then block until killed
//		}
//		dsn := pgtest.NewDatabase(t).URL
//		child, err := crashtest.Start(t, map[string]string{"DSN": dsn})
//		if err != nil {
//			t.Fatal(err)
//		}
//		child.Kill()
//		// ... show the lease is taken again after its TTL
//	}
//
// Ready's payload (one line) carries what the parent needs to know about the child's state,
// such as a token or a row id.
package crashtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvChild names the environment variable that makes a re-executed test binary the child of
// the test it names.
const EnvChild = "ONCE_CRASHTEST_CHILD"

// readyMarker starts the line Ready prints; the parent reads the child's output for it.
const readyMarker = "crashtest: ready:"

// ReadyTimeout is how long Start waits for the child to call Ready. It is generous: a child
// built with -race starts slowly on a loaded machine.
var ReadyTimeout = 60 * time.Second

// IsChild reports whether this process is the child started by Start for the test t.
func IsChild(t testing.TB) bool {
	return os.Getenv(EnvChild) == t.Name()
}

// Ready tells the parent that the child has reached the point where it is to be killed,
// passing payload (newlines are replaced by spaces), and then blocks until the process is
// killed. It never returns.
func Ready(payload string) {
	payload = strings.ReplaceAll(payload, "\n", " ")
	fmt.Fprintf(os.Stdout, "\n%s %s\n", readyMarker, payload)
	os.Stdout.Sync()
	for {
		time.Sleep(time.Hour)
	}
}

// Child is a running child process.
type Child struct {
	// Payload is what the child passed to Ready.
	Payload string

	cmd    *exec.Cmd
	output *lockedBuffer
	exited chan struct{} // closed when the process has been waited for
	state  *os.ProcessState
}

// Start re-executes the test binary to run only t's test, with env added to its
// environment, and waits until the child calls Ready. If the child exits first, or does not
// become ready within ReadyTimeout, Start kills it and returns an error holding the child's
// output. The child is killed when t ends, if the test has not killed it already; it is also
// killed if this process dies (parent-death signal), so no child outlives its test binary.
func Start(t testing.TB, env map[string]string) (*Child, error) {
	t.Helper()
	if IsChild(t) {
		return nil, errors.New("crashtest: Start called in the child process (guard the child's part with IsChild)")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1")
	cmd.Env = append(os.Environ(), EnvChild+"="+t.Name())
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out := &lockedBuffer{}
	cmd.Stderr = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("crashtest: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("crashtest: starting %s: %w", os.Args[0], err)
	}
	c := &Child{cmd: cmd, output: out, exited: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		// Read until the child's output ends, so the child never blocks on a full pipe.
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if p, ok := strings.CutPrefix(line, readyMarker); ok && !sent {
				ready <- strings.TrimSpace(p)
				sent = true
				continue
			}
			out.WriteString(line + "\n")
		}
		cmd.Wait() // after the last read, as StdoutPipe requires; its error is in ProcessState
		c.state = cmd.ProcessState
		close(c.exited)
	}()
	t.Cleanup(func() { c.Kill() })

	select {
	case c.Payload = <-ready:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("crashtest: child for %s exited (%v) before it was ready; its output:\n%s", t.Name(), c.state, out.String())
	case <-time.After(ReadyTimeout):
		c.Kill()
		return nil, fmt.Errorf("crashtest: child for %s was not ready within %v; its output:\n%s", t.Name(), ReadyTimeout, out.String())
	}
}

// Kill sends SIGKILL to the child and waits until it is gone. It is safe to call more than
// once. It returns an error if the child had already exited by itself (it was expected to be
// blocked in Ready).
func (c *Child) Kill() error {
	select {
	case <-c.exited:
		return c.exitedError()
	default:
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
	return c.exitedError()
}

func (c *Child) exitedError() error {
	if ws, ok := c.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return nil
	}
	return fmt.Errorf("crashtest: child exited by itself (%v) instead of being killed; its output:\n%s", c.state, c.output.String())
}

// Pid returns the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Output returns what the child has written so far, apart from its ready line.
func (c *Child) Output() string { return c.output.String() }

// runPattern matches exactly the test named name, subtests included ("TestA/sub" gives
// "^TestA$/^sub$").
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// lockedBuffer collects the child's output from two goroutines (stdout reader, stderr copy).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
