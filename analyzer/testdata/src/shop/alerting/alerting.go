// Package alerting sends an alert by the channel its caller names: each effect is made
// in a branch on that parameter, so which one happens is the caller's choice.
package alerting

import (
	"fmt"
	"net/http"
	"net/smtp"
	"strings"
)

const (
	ByEmail = "email"
	ByHook  = "hook"
	ByAll   = "all"
)

// Notify handles the email and the hook channels only. Every call in the module passes
// ByAll, which neither branch takes: it sends nothing, and is no effect.
func Notify(by, text string) error {
	if by == ByEmail {
		return smtp.SendMail("mail:25", nil, "ops@shop.test", []string{"root@shop.test"}, []byte(text))
	}
	switch by {
	case ByHook:
		_, err := http.Post("https://hooks.shop.test/alerts", "text/plain", strings.NewReader(text))
		return err
	}
	return fmt.Errorf("unknown channel %q", by)
}

// Page is called with ByEmail: its email is sent, and reported here.
func Page(by, text string) error {
	if by == ByEmail {
		return smtp.SendMail("mail:25", nil, "ops@shop.test", []string{"oncall@shop.test"}, []byte(text)) // want `call to smtp.SendMail has no //once: promise and the provider takes no idempotency key: a retry sends the email again; declare a promise on Page \(ONCE001\)$`
	}
	return nil
}

// Relay calls itself with another channel: a branch no caller's argument shows, so it is
// no dispatcher, and its email is reported.
func Relay(by, text string) error {
	if by == ByAll {
		return Relay(ByEmail, text)
	}
	if by == ByEmail {
		return smtp.SendMail("mail:25", nil, "ops@shop.test", []string{"root@shop.test"}, []byte(text)) // want `declare a promise on Relay \(ONCE001\)$`
	}
	return nil
}

// Widen turns "all" into the email channel before it branches: no dispatcher either.
func Widen(by, text string) error {
	if by == ByAll {
		by = ByEmail
	}
	if by == ByEmail {
		return smtp.SendMail("mail:25", nil, "ops@shop.test", []string{"root@shop.test"}, []byte(text)) // want `declare a promise on Widen \(ONCE001\)$`
	}
	return nil
}

// Fall falls through from "all" to the email case: no dispatcher either.
func Fall(by, text string) error {
	switch by {
	case ByAll:
		fallthrough
	case ByEmail:
		return smtp.SendMail("mail:25", nil, "ops@shop.test", []string{"root@shop.test"}, []byte(text)) // want `declare a promise on Fall \(ONCE001\)$`
	}
	return nil
}
