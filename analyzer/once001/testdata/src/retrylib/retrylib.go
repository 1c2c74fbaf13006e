// Package retrylib mails again after a failure, and is called from another package's
// handler (retriedcaller).
package retrylib

import "net/smtp"

// Mail mails again after an error: reported here, where the retry is.
func Mail(to string, msg []byte) (err error) {
	for i := 0; i < 3; i++ {
		if err = smtp.SendMail("mail.example.com:25", nil, "shop@example.com", []string{to}, msg); err == nil { // want `call of smtp.SendMail sends the email with no //once: promise, on a path that runs it again`
			return nil
		}
	}
	return err
}

// Welcome mails a welcome through Mail; the package reads Mail's summary before it decides
// what to report, and its callers read what it decided.
func Welcome(to string) error { return Mail(to, []byte("welcome")) }
