// Package broken does not compile, and has a malformed directive.
package broken

import "net/smtp"

// Send sends.
//
//once:forevr key=to
func Send(to string) error {
	return smtp.SendMail("localhost:25", nil, "a@example.com", []string{to}, undefinedBody)
}
