// Package declared holds the user's declarations: a promise, a guard, a deliberate
// repeat and a claim written by hand.
package declared

import (
	"context"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/mrz1836/postmark"
	once "github.com/oncekit/once/runtime"
)

type App struct {
	pm *postmark.Client
	db once.DB
}

// Resend sends the invite again: doing it again is what it is for.
//
//oncelint:repeat the user asked for the invite again
func (a *App) Resend(ctx context.Context, to string) {
	a.pm.SendEmail(ctx, postmark.Email{To: to, Subject: "invite"})
}

// claim records the invite; its insert is the check.
//
//once:forever table=invites columns=email
func (a *App) claim(ctx context.Context, tx pgx.Tx, email string) error {
	_, err := tx.Exec(ctx, `INSERT INTO invites (email) VALUES ($1) ON CONFLICT (email) DO NOTHING`, email)
	return err
}

func (a *App) Invite(w http.ResponseWriter, r *http.Request) {
	to := r.FormValue("to")
	if r.FormValue("again") != "" {
		a.Resend(r.Context(), to)
		return
	}
	if err := a.claim(r.Context(), nil, to); err != nil {
		return
	}
	a.pm.SendEmail(r.Context(), postmark.Email{To: to, Subject: "invite"})
}

func (a *App) Guarded(w http.ResponseWriter, r *http.Request) {
	to := r.FormValue("to")
	once.Forever[struct{}]{Name: "declared.welcome"}.Do(r.Context(), a.db, to, func(ctx context.Context) (struct{}, error) {
		_, err := a.pm.SendEmail(ctx, postmark.Email{To: to, Subject: "welcome"})
		return struct{}{}, err
	})
}

// Ignored is reported nowhere: the ignore sits where the finding points.
func (a *App) Ignored(w http.ResponseWriter, r *http.Request) {
	//oncelint:ignore ONCE001 the provider deduplicates by the message's own id
	a.pm.SendEmail(r.Context(), postmark.Email{To: "x"})
}
