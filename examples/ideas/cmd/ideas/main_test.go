package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/cmdtest"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The command end to end: it migrates an empty database, serves the button, its workers
// carry the run out on the local fake API, and on shutdown it reports what was paid for.
func TestRun_ServesAndPaysOncePerRun(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	cmd := cmdtest.Start(t, run, []string{"-addr", "127.0.0.1:0", "-workers", "2"}, map[string]string{"DATABASE_URL": db.URL})
	base := cmd.URL

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	locs := storm.Collect(8, func(int) string {
		resp, err := client.Post(base+"/orgs/1/runs", "", nil)
		if err != nil {
			t.Error(err)
			return ""
		}
		resp.Body.Close()
		return resp.Header.Get("Location")
	})
	var run string
	for _, loc := range locs {
		if strings.HasPrefix(loc, "/runs/") {
			run = loc
		} else if loc != "/orgs/1?notice=starting" {
			t.Fatalf("a press went to %q", loc)
		}
	}
	if run == "" {
		t.Fatalf("no press was sent to a run: %q", locs)
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

	if err := cmd.Stop(); err != nil {
		t.Fatalf("the command stopped with %v\n%s", err, cmd.Log())
	}
	if !strings.Contains(cmd.Log(), "the fake model API performed 2 effects: /v1/ideas 1, /v1/research 1\n") {
		t.Errorf("the command's report of effects is missing or wrong:\n%s", cmd.Log())
	}
}

// Without DATABASE_URL the command says what is missing and starts nothing.
func TestRun_WithoutDatabaseURLSaysSo(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is not set") {
		t.Fatalf("run without DATABASE_URL: %v", err)
	}
}
