// Package mailer sends email over SMTP.
package mailer

import "net/smtp"

// Mailer sends through one relay.
type Mailer struct{ Relay, From string }

// Send sends one message; callers decide how often.
func (m *Mailer) Send(to, body string) error {
	return smtp.SendMail(m.Relay, nil, m.From, []string{to}, []byte(body))
}
