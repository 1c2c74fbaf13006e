package standin_test

import (
	"bytes"
	"context"
	"log"
	"strings"
	"testing"

	"github.com/oncekit/once/examples/internal/standin"
	"github.com/oncekit/once/internal/fakeprovider"
)

// With its variable set, the command calls the API it names, and nothing is started.
func TestStart_TheAPIThatTheEnvironmentNames(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	p := standin.Start(func(string) string { return "https://api.example.test" }, "MODEL_URL", "model API", log.New(&logs, "", 0))
	p.Stop()
	if p.URL != "https://api.example.test" || logs.Len() != 0 || p.Report() != "" {
		t.Fatalf("URL %q, log %q, report %q: want the named API and nothing logged", p.URL, logs.String(), p.Report())
	}
}

// Without it, a fake serves, and when the command stops the fake says what it performed,
// by path: effects, not requests (a replay of a key is not a second effect).
func TestStart_AFakeThatCountsItsEffects(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	p := standin.Start(func(string) string { return "" }, "MODEL_URL", "model API", log.New(&logs, "", 0))
	ctx := context.Background()
	for _, call := range []struct{ path, key string }{{"/v1/research", "k1"}, {"/v1/research", "k1"}, {"/v1/ideas", "k2"}, {"/v1/ideas", "k3"}} {
		if _, err := fakeprovider.Post(ctx, p.URL, call.path, call.key, map[string]string{"q": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	p.Stop()
	want := "MODEL_URL is not set: the model API is a local fake at " + p.URL + "\nthe fake model API performed 3 effects: /v1/ideas 2, /v1/research 1\n"
	if logs.String() != want {
		t.Fatalf("log:\n%s\nwant:\n%s", logs.String(), want)
	}
	if !strings.HasPrefix(p.URL, "http://127.0.0.1:") {
		t.Errorf("the fake serves at %s, want loopback", p.URL)
	}
}
