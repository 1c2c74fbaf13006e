package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EnvPgBouncer names the environment variable that runs a test binary's databases through
// PgBouncer in transaction pooling mode. Its value is the pgx query exec mode the URLs ask
// for (default_query_exec_mode): "exec", "simple_protocol" or "cache_describe"; "1" means
// "exec". "cache_statement" and "describe_exec" are accepted too, to watch them fail.
const EnvPgBouncer = "ONCE_TEST_PGBOUNCER"

// pooler is a PgBouncer this process started in front of the server in use.
type pooler struct {
	dir    string
	port   int
	cmd    *exec.Cmd
	exited chan error
	// server is the URL of the server behind it, whose user (and password) it logs in with.
	server *url.URL
}

// findPgBouncer returns the path of the pgbouncer binary.
func findPgBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer", "/usr/local/bin/pgbouncer"} {
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", errors.New("no pgbouncer found on PATH or in /usr/sbin (install PgBouncer, Debian's pgbouncer package)")
}

// startPooler starts PgBouncer in transaction pooling mode in front of the server serverURL
// names, with every database of that server reachable through it. It runs as the postgres
// user when this process is root (PgBouncer refuses root too).
func startPooler(serverURL string) (*pooler, error) {
	bin, err := findPgBouncer()
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	server, err := url.Parse(serverURL)
	if err != nil || server.Scheme == "" {
		return nil, fmt.Errorf("PgBouncer needs the server as a URL, not %q", redact(serverURL))
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-pgbouncer", dirPrefix, os.Getpid()))
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating PgBouncer's directory: %w", err)
	}
	p := &pooler{dir: dir, server: server}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			p.remove()
			return nil, fmt.Errorf("handing %s to the postgres user: %w", dir, err)
		}
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			p.remove()
			return nil, err
		}
		if err := p.start(bin, port, cred); err != nil {
			lastErr = err
			continue
		}
		return p, nil
	}
	p.remove()
	return nil, lastErr
}

func (p *pooler) start(bin string, port int, cred *syscall.Credential) error {
	user := p.server.User.Username()
	if user == "" {
		user = "postgres"
	}
	password, _ := p.server.User.Password()
	host, serverPort := p.server.Hostname(), p.server.Port()
	if serverPort == "" {
		serverPort = "5432"
	}
	target := fmt.Sprintf("host=%s port=%s user=%s", host, serverPort, user)
	if password != "" {
		target += " password=" + quoteConnValue(password)
	}
	// Transaction pooling: a client holds a server connection for one transaction (or one
	// statement outside of one) and its next goes to whichever is free, most recently used
	// first, so a caller's statements land on server connections other callers used. A
	// database's pool holds a storm's 64 transactions at once (a negative control keeps them
	// all open at a barrier; fewer would deadlock it), and all pools together stay under the
	// test cluster's max_connections: a client waits for a server connection, it never fails
	// for want of one.
	conf := fmt.Sprintf(`[databases]
* = %s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 4000
default_pool_size = 70
max_user_connections = 340
reserve_pool_size = 0
server_idle_timeout = 5
ignore_startup_parameters = extra_float_digits
logfile = %s
log_connections = 0
log_disconnections = 0
`, target, port, filepath.Join(p.dir, "userlist.txt"), filepath.Join(p.dir, "pgbouncer.log"))
	files := map[string]string{
		"pgbouncer.ini": conf,
		"userlist.txt":  fmt.Sprintf("%q %q\n", user, ""),
	}
	for name, text := range files {
		path := filepath.Join(p.dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		if cred != nil {
			if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
				return fmt.Errorf("handing %s to the postgres user: %w", name, err)
			}
		}
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, filepath.Join(p.dir, "pgbouncer.ini"))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting pgbouncer: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(p.dir, "pgbouncer.log"))
			return fmt.Errorf("pgbouncer exited during start-up (%v):\n%s%s", err, out.Bytes(), bytes.TrimSpace(log))
		default:
		}
		if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond); err == nil {
			conn.Close()
			p.port, p.cmd, p.exited = port, cmd, exited
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return errors.New("pgbouncer did not accept connections within 10s")
}

// url returns the URL of database name through the pooler, asking pgx for mode when it is
// not empty.
func (p *pooler) url(name, mode string) string {
	u := *p.server
	u.Host = fmt.Sprintf("127.0.0.1:%d", p.port)
	u.Path = "/" + name
	q := u.Query()
	if mode != "" {
		q.Set("default_query_exec_mode", mode)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// stop ends PgBouncer at once (SIGINT is its safe shutdown, which waits for clients; a
// test's clients are gone or do not matter) and waits for it to exit.
func (p *pooler) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
	p.cmd = nil
}

func (p *pooler) remove() { os.RemoveAll(p.dir) }

// poolerMode returns the query exec mode EnvPgBouncer asks for, "" when it is unset, or an
// error naming the values it takes.
func poolerMode() (string, error) {
	switch v := strings.TrimSpace(os.Getenv(EnvPgBouncer)); v {
	case "", "0":
		return "", nil
	case "1", "exec":
		return "exec", nil
	case "simple_protocol", "cache_describe", "cache_statement", "describe_exec":
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: want 1, exec, simple_protocol, cache_describe, cache_statement or describe_exec", EnvPgBouncer, v)
	}
}

// quoteConnValue quotes a value for a keyword/value connection string.
func quoteConnValue(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// portOf returns the port of a pooler, for messages.
func (p *pooler) String() string { return "PgBouncer on 127.0.0.1:" + strconv.Itoa(p.port) }
