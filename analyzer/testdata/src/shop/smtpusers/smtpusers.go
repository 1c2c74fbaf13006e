// Package smtpusers calls the SMTP client through an interface, as a mailer does.
package smtpusers

import "shop/smtpclient"

// Sender is what the mailer needs of a client.
type Sender interface {
	Mail(to, subject, body string, headers map[string][]string) error
	Digest(to string, items []string) error
	Notify(event string) error
	Register(name string) error
}

var _ Sender = (*smtpclient.Client)(nil)

type Mailer struct{ s Sender }

func (m *Mailer) Welcome(to string) error { return m.s.Mail(to, "Welcome", "Hello", nil) }

func (m *Mailer) Weekly(to string) error { return m.s.Digest(to, nil) }

func (m *Mailer) Signup(name string) error {
	if err := m.s.Register(name); err != nil {
		return err
	}
	return m.s.Notify("signup")
}
