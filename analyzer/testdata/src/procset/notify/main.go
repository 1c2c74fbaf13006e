// Command notify emails users about their account.
package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/resend/resend-go/v2"

	"procset/dedupe"
)

var (
	recent  = dedupe.New()
	limiter = dedupe.NewLimiter(time.Hour)
	conns   = &dedupe.Pool{}
)

type User struct {
	ID    int64
	Email string
}

func main() {
	mail := resend.NewClient("key")
	var welcomed sync.Map
	var invited sync.Map
	http.HandleFunc("/welcome", func(w http.ResponseWriter, r *http.Request) {
		_ = welcome(r.Context(), &welcomed, mail, User{Email: r.FormValue("email")})
	})
	http.HandleFunc("/invite", func(w http.ResponseWriter, r *http.Request) {
		if dedupe.FirstTime(&invited, r.FormValue("email")) { // want `main's sync.Map invited, which lasts as long as the process, through dedupe.FirstTime, is checked then written as the guard of the call to \(\*resend.Client\).Emails.Send, but it lasts one process`
			_, _ = mail.Emails.Send(&resend.SendEmailRequest{To: []string{r.FormValue("email")}, Subject: "You are invited"})
		}
	})
	_ = http.ListenAndServe(":8080", nil)
}

// welcome sends the welcome email once per user, as long as the set it is given lasts:
// main's, which a restart empties and a second replica never shares.
func welcome(ctx context.Context, sent *sync.Map, mail *resend.Client, u User) error {
	if _, loaded := sent.LoadOrStore(u.Email, true); loaded { // want `sync.Map parameter sent \(main's sync.Map welcomed, which lasts as long as the process, passed by main.main\) is checked then written as the guard of the call to \(\*resend.Client\).Emails.Send`
		return nil
	}
	_, err := mail.Emails.Send(&resend.SendEmailRequest{To: []string{u.Email}, Subject: "Welcome"})
	return err
}

// alertOnce texts the on-call once per incident through a dedupe set in another package.
func alertOnce(mail *resend.Client, incident string) error {
	if recent.Seen(incident) { // want `package-level set recent, through \(\*dedupe.Set\).Seen, is checked then written as the guard of the call to \(\*resend.Client\).Emails.Send`
		return nil
	}
	_, err := mail.Emails.Send(&resend.SendEmailRequest{To: []string{"oncall@example.com"}, Subject: incident})
	return err
}

// remind emails at most once an hour per user, by a limiter.
func remind(mail *resend.Client, u User) error {
	if !limiter.Allow(u.Email) { // want `package-level set limiter, through \(\*dedupe.Limiter\).Allow, is checked then written as the guard`
		return nil
	}
	_, err := mail.Emails.Send(&resend.SendEmailRequest{To: []string{u.Email}, Subject: "Reminder"})
	return err
}

// alertKeyed keeps the set in front of a keyed send: the provider's key is the promise.
func alertKeyed(ctx context.Context, mail *resend.Client, incident string) error {
	if recent.Seen(incident) {
		return nil
	}
	_, err := mail.Emails.SendWithOptions(ctx, &resend.SendEmailRequest{To: []string{"oncall@example.com"}},
		&resend.SendEmailOptions{IdempotencyKey: "incident/" + incident})
	return err
}

// digest drops repeated addresses within one batch: the set is the batch's. The send
// itself has no promise, which ONCE001 reports; the set is not the mistake.
func digest(mail *resend.Client, users []User) {
	for _, u := range users {
		batch := dedupe.New()
		if batch.Seen(u.Email) {
			continue
		}
		_, _ = mail.Emails.Send(&resend.SendEmailRequest{To: []string{u.Email}, Subject: "Digest"}) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
	}
}

// sendAll passes a set made for this call to welcome: it lasts one call, not a process.
func sendAll(ctx context.Context, mail *resend.Client, users []User) {
	var once sync.Map
	for _, u := range users {
		_ = welcome(ctx, &once, mail, u)
	}
}

// connect uses the pool's connection: the map caches what the effect needs, it does not
// decide whether the effect happens.
func connect(mail *resend.Client, account string) error {
	c := conns.Get(account)
	_, err := mail.Emails.Send(&resend.SendEmailRequest{To: []string{c.Account}, Subject: "Connected"}) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
	return err
}

// count reads the set's size for a log line: no verdict, no effect after it.
func count() string { return fmt.Sprint(recent.Len()) }
