// Package mailer is a fixture for linttest: one send with no promise, one under a declared
// guard.
package mailer

import (
	"context"
	"net/http"
	"net/smtp"
)

// HandleInvite mails an invitation with no promise: a retried POST sends it twice.
func HandleInvite(w http.ResponseWriter, r *http.Request) {
	to := r.FormValue("to")
	if err := smtp.SendMail("mail.internal:25", nil, "hello@shop.test", []string{to}, []byte("join us")); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

// Welcome is a message to one new user.
type Welcome struct {
	UserID int64
	To     string
}

// SendWelcome sends the welcome mail, once for ever per user.
//
//once:forever key=w.UserID
func SendWelcome(ctx context.Context, w Welcome) error {
	return smtp.SendMail("mail.internal:25", nil, "hello@shop.test", []string{w.To}, []byte("welcome"))
}
