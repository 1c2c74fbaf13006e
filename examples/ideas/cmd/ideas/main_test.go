package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// logBuffer is a log the test reads while the command writes it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// The command end to end: it migrates an empty database, serves the button, its workers
// carry the run out on the local fake API, and on shutdown it reports what was paid for.
func TestRun_ServesAndPaysOncePerRun(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &logBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-workers", "2"}, func(k string) string { return env[k] }, logs)
	}()

	serving := regexp.MustCompile(`serving on (http://[0-9.:]+)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := serving.FindStringSubmatch(logs.String()); m != nil {
			base = m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("the command stopped: %v\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start serving:\n%s", logs)
		}
	}

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var wg sync.WaitGroup
	locs := make([]string, 8)
	for i := range locs {
		wg.Go(func() {
			resp, err := client.Post(base+"/orgs/1/runs", "", nil)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			locs[i] = resp.Header.Get("Location")
		})
	}
	wg.Wait()
	var run string
	for _, loc := range locs {
		if strings.HasPrefix(loc, "/runs/") {
			run = loc
		} else if loc != "/orgs/1?notice=starting" {
			t.Fatalf("a press went to %q", loc)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + run)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Status string `json:"status"`
			Ideas  []any  `json:"ideas"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if page.Status == "completed" && len(page.Ideas) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s after 30s", run, page.Status)
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the command stopped with %v\n%s", err, logs)
	}
	if !strings.Contains(logs.String(), "the fake paid API performed 2 effects: research 1, ideas 1, refinements 0") {
		t.Errorf("the command's report of effects is missing or wrong:\n%s", logs)
	}
}

// Without DATABASE_URL the command says what is missing and starts nothing.
func TestRun_WithoutDatabaseURLSaysSo(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, func(string) string { return "" }, &logBuffer{})
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is not set") {
		t.Fatalf("run without DATABASE_URL: %v", err)
	}
}
