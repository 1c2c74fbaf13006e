// Package retriedcaller calls, from an HTTP handler, a function whose retry loop is
// reported in its own package: one cause, one finding, there.
package retriedcaller

import (
	"net/http"

	"retrylib"
)

// Handle mails through retrylib.Mail.
func Handle(w http.ResponseWriter, r *http.Request) {
	_ = retrylib.Mail(r.FormValue("to"), []byte("receipt"))
}

// Ping posts through the other package's retry helper, which its fact names.
func Ping(url string) error {
	return retrylib.Again([]int{1, 5, 15}, func() error {
		_, err := http.Post(url, "text/plain", nil) // want `call of http.Post sends a POST request with no //once: promise, on a path that runs it again`
		return err
	})
}

// Signup mails through MailThen, from an HTTP handler a client may send twice.
func Signup(w http.ResponseWriter, r *http.Request) {
	_ = retrylib.MailThen(r.FormValue("to"), func() error { return nil }) // want `call of retrylib.MailThen sends the email with no //once: promise, on a path that runs it again`
}
