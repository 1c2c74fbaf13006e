// Package mail is a dependency the module vendors: it sends a message of its own making.
package mail

import "net/smtp"

// Notify mails the shop's fixed notice.
func Notify() error {
	return smtp.SendMail("localhost:25", nil, "shop@example.com", []string{"ops@example.com"}, []byte("new order"))
}
