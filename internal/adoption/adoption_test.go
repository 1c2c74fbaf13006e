package adoption

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// driver is the program the test adds to the README's module: it calls the guarded function
// twice at once (the first call's effect held open until the second has answered, so the two
// overlap on every run), then once more after both, and the bare function twice at once as
// the control that shows the provider counts a repeated effect. It prints what each call got.
const driver = `package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"

	"example.com/shop/welcome"
)

// mailer posts each email to the provider under path; its first Send waits for release.
type mailer struct {
	url, path string
	calls     atomic.Int32
	started   chan struct{}
	release   chan struct{}
}

func (m *mailer) Send(ctx context.Context, to, template string) error {
	if m.calls.Add(1) == 1 {
		close(m.started)
		<-m.release
	}
	body, _ := json.Marshal(map[string]string{"to": to, "template": template})
	resp, err := http.Post(m.url+m.path, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("provider answered %s", resp.Status)
	}
	return nil
}

func main() {
	ctx := context.Background()
	db, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	check(err)
	defer db.Close()
	check(welcome.Start(ctx, db))

	report := map[string]string{}
	m := &mailer{url: os.Getenv("PROVIDER_URL"), path: "/emails", started: make(chan struct{}), release: make(chan struct{})}
	first := make(chan string)
	go func() {
		out, err := welcome.SendWelcomeOnce(ctx, db, m, "user-1")
		first <- fmt.Sprintf("%v %v", out.Status, err)
	}()
	<-m.started
	out, err := welcome.SendWelcomeOnce(ctx, db, m, "user-1")
	report["second"] = fmt.Sprintf("%v %v", out.Status, err)
	report["second.Err"] = fmt.Sprint(out.Err())
	close(m.release)
	report["first"] = <-first
	report["retry"] = fmt.Sprint(welcome.OnSignup(ctx, db, m, "user-1"))

	bare := &mailer{url: os.Getenv("PROVIDER_URL"), path: "/bare", started: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error)
	go func() { done <- welcome.SendWelcome(ctx, bare, "user-1") }()
	<-bare.started
	check(welcome.SendWelcome(ctx, bare, "user-1"))
	close(bare.release)
	check(<-done)

	check(json.NewEncoder(os.Stdout).Encode(report))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// TestReadme_AdoptionPath builds a new module from README.md alone: its install commands (with
// the replace pointing at this checkout), its Go files, go generate, goose, verify at
// start-up, and two concurrent calls that make one effect.
func TestReadme_AdoptionPath(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, install := readmeBlocks(t, string(readme))
	db := pgtest.NewDatabase(t) // skips without PostgreSQL, fails under CI=true
	provider := fakeprovider.New(t)

	mod := t.TempDir()
	write(t, filepath.Join(mod, "go.mod"), "module example.com/shop\n\ngo 1.26\n")
	for name, text := range files {
		write(t, filepath.Join(mod, name), text)
	}
	write(t, filepath.Join(mod, "cmd", "twice", "main.go"), driver)

	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "DATABASE_URL="+db.DirectURL, "PROVIDER_URL="+provider.URL)
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = mod, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, line := range install {
		run(strings.Fields(strings.ReplaceAll(line, "../once", root))...)
	}
	run("go", "generate", "./...")
	if _, err := os.Stat(filepath.Join(mod, "welcome", "once_gen.go")); err != nil {
		t.Fatalf("go generate wrote no wrapper: %v", err)
	}

	cfg, err := pgx.ParseConfig(db.DirectURL)
	if err != nil {
		t.Fatal(err)
	}
	sqldb := stdlib.OpenDB(*cfg)
	defer sqldb.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqldb, os.DirFS(filepath.Join(mod, "migrations")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	applied, err := p.Up(ctx)
	if err != nil {
		t.Fatalf("goose up: %v", err)
	}
	if len(applied) != 1 {
		t.Errorf("goose applied %d files, want the runtime's one schema file", len(applied))
	}

	var got map[string]string
	out := run("go", "run", "./cmd/twice")
	if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]), &got); err != nil {
		t.Fatalf("driver output %q: %v", out, err)
	}
	want := map[string]string{
		"first":      "ran <nil>",
		"second":     "in flight <nil>",
		"second.Err": "once: in flight",
		"retry":      "<nil>",
	}
	for k, w := range want {
		if !strings.HasPrefix(got[k], w) {
			t.Errorf("%s call: %q, want %q", k, got[k], w)
		}
	}
	if n := provider.EffectsAt("/emails"); n != 1 {
		t.Errorf("the guarded calls sent %d emails, want 1", n)
	}
	if n := provider.EffectsAt("/bare"); n != 2 {
		t.Errorf("control: the bare calls sent %d emails, want 2 (the provider must count a repeat)", n)
	}
	var rows int
	if err := sqldb.QueryRowContext(ctx, `SELECT count(*) FROM once.operations WHERE name = 'welcome.SendWelcome'`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("once.operations holds %d rows for the guard (%v), want 1", rows, err)
	}
}

// fileTag marks a README code block as a file of the example module.
var fileTag = regexp.MustCompile(`^// file: (\S+)$`)

// readmeBlocks returns the README's Go blocks tagged with a file name, by name, and the go
// commands of its install block for a module using a checkout (the one holding a replace).
func readmeBlocks(t *testing.T, readme string) (files map[string]string, install []string) {
	files = map[string]string{}
	var block []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in, block = true, nil
		case in && line == "```":
			in = false
			if len(block) > 0 {
				if m := fileTag.FindStringSubmatch(block[0]); m != nil {
					files[m[1]] = strings.Join(block[1:], "\n") + "\n"
				} else if strings.Contains(strings.Join(block, "\n"), "-replace=") {
					install = append([]string(nil), block...)
				}
			}
		case in:
			block = append(block, line)
		}
	}
	if len(files) == 0 || len(install) == 0 {
		t.Fatalf("README.md: found %d tagged Go files and %d install commands; want both", len(files), len(install))
	}
	return files, install
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
