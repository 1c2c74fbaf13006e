// Package pager pages the one on call by email.
package pager

import (
	"context"
	"net/smtp"

	"example.com/plugins/notify"
)

// Pager emails the one on call.
type Pager struct{ To string }

func init() { notify.Register(&Pager{To: "oncall@example.com"}) }

// Deliver emails the alert.
func (p *Pager) Deliver(ctx context.Context, alert string) error {
	return smtp.SendMail("mail.example.com:25", nil, "alerts@example.com", []string{p.To}, []byte(alert))
}
