package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oncekit/once/examples/internal/cmdtest"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestCommand_ServesAndWorks runs the command as a user does, against a fresh database:
// it migrates, serves, and its worker carries out a queued report; SIGINT stops it cleanly.
func TestCommand_ServesAndWorks(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	bin := filepath.Join(t.TempDir(), "reports")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Port 0: the command picks a free port and says which in its log, so no other
	// process can take the port between a test's choice and the command's listen.
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-work-every", "20ms", "-account", "acme:owner@acme.test:acme-token")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+db.URL, "MODEL_URL=", "MAIL_URL=") // the local fakes
	logs := &cmdtest.Log{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			<-exited
		}
	}()

	var base string
	call := func(method, path, key string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer acme-token")
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if base = cmdtest.ServingURL(logs.String()); base != "" {
			if status, _ := call("GET", "/usage", "", nil); status == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start serving:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	status, sub := call("POST", "/submissions", "submit-1", map[string]string{"title": "Q3", "body": "Three regions."})
	if status != http.StatusCreated {
		t.Fatalf("submission: %d %v", status, sub)
	}
	status, job := call("POST", fmt.Sprintf("/submissions/%v/reports", sub["id"]), "q3-report", map[string]string{"tone": "formal"})
	if status != http.StatusAccepted {
		t.Fatalf("report: %d %v", status, job)
	}
	for {
		_, v := call("GET", fmt.Sprintf("/jobs/%v", job["id"]), "", nil)
		if v["state"] == "done" && v["report"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not carry out the job: %v\n%s", v, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, u := call("GET", "/usage", "", nil); u["reports"] != 1.0 {
		t.Fatalf("usage: %v", u)
	}
	// The owner's email is a follow-up the worker's drain delivers after the job is done:
	// wait for its delivery, read from the outbox, before stopping the command.
	conn, err := pgx.Connect(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for {
		var delivered bool
		err := conn.QueryRow(context.Background(),
			"SELECT count(*) = 1 FROM once.followups WHERE state = 'delivered'").Scan(&delivered)
		if err != nil {
			t.Fatal(err)
		}
		if delivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not email the owner:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("exit after SIGINT: %v\n%s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the command did not stop on SIGINT:\n%s", logs.String())
	}
	for _, want := range []string{
		"the fake model API performed 1 effect: /v1/responses 1\n",
		"the fake email API performed 1 effect: /v1/emails 1\n",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the command's log does not say %q:\n%s", want, logs.String())
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
