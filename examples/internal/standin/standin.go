// Package standin gives an example's command the paid APIs it calls: the one an environment
// variable names (MODEL_URL, MAIL_URL, ...), or, where it is not set, a local fake on
// loopback (internal/fakeprovider) that honours Idempotency-Key and counts what it performs,
// so that an example can be tried with nothing but PostgreSQL. When the command stops, the
// fake's count is logged: the effects the app paid for, by path.
package standin

import (
	"fmt"
	"log"
	"sort"
	"strings"

	"github.com/oncekit/once/internal/fakeprovider"
)

// Provider is a paid API's base URL, with the fake behind it where Start started one.
type Provider struct {
	// URL is the API's base URL.
	URL string

	what string
	fake *fakeprovider.Server
	log  *log.Logger
}

// Start returns the API named by the environment variable env, read with getenv; when env
// is not set, it starts a fake, says so in log, and returns that. what names the API in the
// log ("model API").
func Start(getenv func(string) string, env, what string, log *log.Logger) *Provider {
	if u := getenv(env); u != "" {
		return &Provider{URL: u, what: what, log: log}
	}
	fake := fakeprovider.Start()
	log.Printf("%s is not set: the %s is a local fake at %s", env, what, fake.URL)
	return &Provider{URL: fake.URL, what: what, fake: fake, log: log}
}

// Stop closes the fake, if Start started one, and logs the effects it performed.
func (p *Provider) Stop() {
	if p.fake == nil {
		return
	}
	p.fake.Close()
	p.log.Print(p.Report())
}

// Report says what the fake performed: "the fake model API performed 2 effects:
// /v1/ideas 1, /v1/research 1". It is empty for a real API.
func (p *Provider) Report() string {
	if p.fake == nil {
		return ""
	}
	byPath := map[string]int{}
	for _, e := range p.fake.Log() {
		byPath[e.Path]++
	}
	paths := make([]string, 0, len(byPath))
	for path := range byPath {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	var b strings.Builder
	n, noun := p.fake.Effects(), "effects"
	if n == 1 {
		noun = "effect"
	}
	fmt.Fprintf(&b, "the fake %s performed %d %s", p.what, n, noun)
	for i, path := range paths {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s %d", sep, path, byPath[path])
	}
	return b.String()
}
