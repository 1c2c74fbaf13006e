// Package sets guards emails with sets that last one process.
package sets

import (
	"context"
	"net/http"
	"sync"

	"dedupe"

	"github.com/mrz1836/postmark"
	once "github.com/oncekit/once/runtime"
)

var sent sync.Map

type App struct {
	pm     *postmark.Client
	db     once.DB
	mu     sync.Mutex
	greets map[string]bool
	recent *dedupe.Set
}

func (a *App) Welcome(w http.ResponseWriter, r *http.Request) {
	to := r.FormValue("to")
	if _, loaded := sent.LoadOrStore(to, true); loaded { // want `sets.sent is checked and written as the guard of \(\*postmark.Client\).SendEmail, which sends the email: a set lasts one process`
		return
	}
	a.pm.SendEmail(r.Context(), postmark.Email{To: to})
}

func (a *App) Greet(w http.ResponseWriter, r *http.Request) {
	to := r.FormValue("to")
	a.mu.Lock()
	if a.greets[to] { // want `sets.App.greets is checked and written as the guard`
		a.mu.Unlock()
		return
	}
	a.greets[to] = true
	a.mu.Unlock()
	a.pm.SendEmail(r.Context(), postmark.Email{To: to})
}

// Alert asks a dedupe set of another package, through its Seen verdict.
func (a *App) Alert(w http.ResponseWriter, r *http.Request) {
	if a.recent.Seen(r.FormValue("incident")) { // want `the set behind \(\*dedupe.Set\).Seen is checked and written as the guard`
		return
	}
	a.pm.SendEmail(r.Context(), postmark.Email{To: "ops"})
}

// batch deduplicates one batch: its map lasts one call.
func (a *App) batch(ctx context.Context, to []string) {
	seen := map[string]bool{}
	for _, t := range to {
		if seen[t] {
			continue
		}
		seen[t] = true
		a.pm.SendEmail(ctx, postmark.Email{To: t})
	}
}

// Cached holds a promise: the set is a cache in front of it.
//
//once:forever key=to
func (a *App) Cached(ctx context.Context, to string) error {
	if _, loaded := sent.LoadOrStore(to, true); loaded {
		return nil
	}
	_, err := a.pm.SendEmail(ctx, postmark.Email{To: to})
	return err
}

// record writes after the effect and checks nothing: a record, no guard.
func (a *App) record(ctx context.Context, to string) {
	a.pm.SendEmail(ctx, postmark.Email{To: to})
	sent.Store(to, true)
}
