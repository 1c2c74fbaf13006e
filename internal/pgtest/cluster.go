package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// dirPrefix names the temporary directories clusters live in; the owning process id follows,
// so a later run can tell an abandoned cluster from a live one.
const dirPrefix = "once-pgtest-"

// cluster is a PostgreSQL server this process started and owns.
type cluster struct {
	dir  string // temporary directory holding data/, the socket and the log
	port int
	cmd  *exec.Cmd
	// exited receives the server's exit status once; the waiting goroutine reaps the process.
	exited chan error
	url    string // superuser URL of the "postgres" database
	// settings are more -c name=value settings of the server, after the defaults.
	settings []string
}

// findBinDir returns the directory holding initdb and postgres.
func findBinDir() (string, error) {
	var candidates []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(versions, func(i, j int) bool { return majorOf(versions[i]) > majorOf(versions[j]) })
	candidates = append(candidates, versions...)
	for _, dir := range candidates {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", errors.New("no initdb and postgres found on PATH, in `pg_config --bindir` or in /usr/lib/postgresql/*/bin (install PostgreSQL, or set ONCE_TEST_DATABASE_URL)")
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// serverUser returns the credential the server must run under: nil when this process is not
// root, the postgres user's otherwise (PostgreSQL refuses to run as root).
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and no postgres user to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// removeAbandoned deletes cluster directories whose owning process no longer exists: the ones
// a panicking or killed test binary could not remove itself.
func removeAbandoned() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		owner, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), dirPrefix), "-")
		pid, err := strconv.Atoi(owner)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(dir)
		}
	}
}

// startCluster initialises and starts a new cluster with durability off. The server gets
// SIGKILL when this process dies, whatever the reason.
func startCluster() (*cluster, error) {
	return startClusterIn(dirPrefix+strconv.Itoa(os.Getpid()), false, nil)
}

// startNamedCluster is startCluster for a cluster beside the main one: name tells their
// directories apart, and settings are more -c name=value settings of the server.
func startNamedCluster(name string, settings []string) (*cluster, error) {
	return startClusterIn(dirPrefix+strconv.Itoa(os.Getpid())+"-"+name, false, settings)
}

// startClusterIn initialises and starts a cluster in the temporary directory name, with
// PostgreSQL's default durability when durable is true, and settings as more -c
// name=value settings of the server.
func startClusterIn(name string, durable bool, settings []string) (*cluster, error) {
	removeAbandoned()
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(os.TempDir(), name)
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating cluster directory: %w", err)
	}
	c := &cluster{dir: dir, settings: settings}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			c.remove()
			return nil, fmt.Errorf("handing %s to the postgres user: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		c.remove()
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}

	// A few attempts: the free port can be taken between choosing and binding it.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			c.remove()
			return nil, err
		}
		if err := c.start(bin, data, port, cred, durable); err != nil {
			lastErr = err
			continue
		}
		return c, nil
	}
	c.remove()
	return nil, lastErr
}

func (c *cluster) start(bin, data string, port int, cred *syscall.Credential, durable bool) error {
	logPath := filepath.Join(c.dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("opening server log: %w", err)
	}
	defer logFile.Close()
	args := []string{"-D", data,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + c.dir,
	}
	if !durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	args = append(args, "-c", "max_connections=400",
		"-c", "shared_buffers=64MB",
		"-c", "max_prepared_transactions=0",
		"-c", "log_min_messages=warning",
	)
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	for _, kv := range c.settings {
		cmd.Args = append(cmd.Args, "-c", kv)
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres exited during start-up (%v):\n%s", err, bytes.TrimSpace(log))
		default:
		}
		if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond); err == nil {
			conn.Close()
			c.port, c.cmd, c.exited = port, cmd, exited
			c.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			if err := waitAccepting(c.url, deadline); err != nil {
				c.stop()
				return err
			}
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	return errors.New("postgres did not accept connections within 30s")
}

// stop shuts the server down at once (a test cluster has nothing worth a checkpoint) and
// waits for it to exit.
func (c *cluster) stop() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	// SIGQUIT is PostgreSQL's immediate shutdown: children exit, nothing is flushed.
	c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	}
	c.cmd = nil
}

func (c *cluster) remove() { os.RemoveAll(c.dir) }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
