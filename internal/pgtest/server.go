package pgtest

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
)

// Server is a throwaway cluster a program starts for itself, outside a test binary's Main:
// a benchmark that must measure PostgreSQL as it runs in production starts one with
// PostgreSQL's default durability (fsync, synchronous_commit and full_page_writes on), which
// the test clusters turn off.
type Server struct{ c *cluster }

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
	return &Server{c: c}, nil
}

// URL is the superuser URL of the server's postgres database.
func (s *Server) URL() string { return s.c.url }

// Stop shuts the server down at once and removes its directory.
func (s *Server) Stop() {
	s.c.stop()
	s.c.remove()
}
