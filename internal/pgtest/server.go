package pgtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Server is a throwaway cluster a program starts for itself, outside a test binary's Main:
// a benchmark that must measure PostgreSQL as it runs in production starts one with
// PostgreSQL's default durability (fsync, synchronous_commit and full_page_writes on), which
// the test clusters turn off.
type Server struct {
	c       *cluster
	durable bool
}

var servers atomic.Int64

// StartServer initialises and starts a cluster in a temporary directory on a free loopback
// port, as Main does for tests, with the default durability when durable is true. The
// caller must Stop it; a process that dies takes it along (see the package doc).
func StartServer(durable bool) (*Server, error) {
	removeAbandoned()
	name := dirPrefix + strconv.Itoa(os.Getpid()) + "-server" + strconv.FormatInt(servers.Add(1), 10)
	c, err := startClusterIn(name, durable, nil)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &Server{c: c, durable: durable}, nil
}

// URL is the superuser URL of the server's postgres database.
func (s *Server) URL() string { return s.c.url }

// Stop shuts the server down at once and removes its directory.
func (s *Server) Stop() {
	s.c.stop()
	s.c.remove()
}

// StartServerWith is StartServer with more -c name=value settings of the server, after the
// defaults (a later setting of the same name wins): a fault-injection run that kills the
// server asks for synchronous_commit=on, so that a crash loses no acknowledged commit.
func StartServerWith(durable bool, settings ...string) (*Server, error) {
	removeAbandoned()
	name := dirPrefix + strconv.Itoa(os.Getpid()) + "-server" + strconv.FormatInt(servers.Add(1), 10)
	c, err := startClusterIn(name, durable, settings)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &Server{c: c, durable: durable}, nil
}

// Crash kills the server and every one of its processes with SIGKILL, as an out-of-memory
// kill or a lost container would: nothing is shut down, open connections break, and the next
// start runs crash recovery.
func (s *Server) Crash() {
	if s.c.cmd == nil || s.c.cmd.Process == nil {
		return
	}
	syscall.Kill(-s.c.cmd.Process.Pid, syscall.SIGKILL)
	<-s.c.exited
	s.c.cmd = nil
}

// Restart starts a crashed (or running, which it stops first) server again on its port and
// data directory, returning once it accepts connections: after crash recovery.
func (s *Server) Restart() error {
	s.c.stop()
	bin, err := findBinDir()
	if err != nil {
		return err
	}
	cred, err := serverUser()
	if err != nil {
		return err
	}
	data := filepath.Join(s.c.dir, "data")
	// The port was this server's; retry a little while the kernel lets go of it.
	for attempt := 0; ; attempt++ {
		err = s.c.start(bin, data, s.c.port, cred, s.durable)
		if err == nil || attempt == 20 {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
