package main

import (
	"context"
	"encoding/json"
	"fmt"
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
	// The presses share one run while it is open. A press the machine delays until that run
	// has completed starts the next one, so every run a press was sent to is waited for and
	// must have been paid for exactly once, and no two may have been open at once.
	runs := map[string]bool{}
	for _, loc := range locs {
		if strings.HasPrefix(loc, "/runs/") {
			runs[loc] = true
		} else if loc != "/orgs/1?notice=starting" {
			t.Fatalf("a press went to %q", loc)
		}
	}
	if len(runs) == 0 {
		t.Fatalf("no press was sent to a run: %q", locs)
	}
	for run := range runs {
		waitCompleted(t, base+run)
	}
	// Every run is one a press was sent to, and none started while an earlier one was open.
	var n, overlapping int
	if err := db.Pool(t, 1).QueryRow(context.Background(), `SELECT (SELECT count(*) FROM runs WHERE org_id = 1),
		(SELECT count(*) FROM runs a JOIN runs b ON b.org_id = a.org_id AND b.id > a.id
			WHERE a.org_id = 1 AND (a.finished_at IS NULL OR b.created_at < a.finished_at))`).Scan(&n, &overlapping); err != nil {
		t.Fatal(err)
	}
	if n != len(runs) || overlapping != 0 {
		t.Fatalf("%d runs were started, %d of them while an earlier one was open, and the presses were sent to %d: %q", n, overlapping, len(runs), locs)
	}

	if err := cmd.Stop(); err != nil {
		t.Fatalf("the command stopped with %v\n%s", err, cmd.Log())
	}
	want := fmt.Sprintf("the fake model API performed %d effects: /v1/ideas %d, /v1/research %d\n", 2*len(runs), len(runs), len(runs))
	if !strings.Contains(cmd.Log(), want) {
		t.Errorf("the command's report of effects for %d runs is missing or wrong:\n%s", len(runs), cmd.Log())
	}
}

// waitCompleted waits until the run at url has completed with its ideas saved.
func waitCompleted(t *testing.T, url string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(url)
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
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %s after 30s", url, page.Status)
		}
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
