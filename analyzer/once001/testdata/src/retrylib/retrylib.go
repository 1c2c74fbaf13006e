// Package retrylib mails again after a failure, and is called from another package's
// handler (retriedcaller).
package retrylib

import (
	"bytes"
	"net/http"
	"net/smtp"
)

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

// Retry is the package's own retry helper: it calls fn again after each failure.
func Retry(attempts int, fn func() error) error {
	err := fn()
	for i := 0; err != nil && i < attempts; i++ {
		err = fn()
	}
	return err
}

// Again calls fn again after a failure, once per delay, and stops at the first success.
func Again(delays []int, fn func() error) error {
	err := fn()
	if err != nil {
		for range delays {
			if err = fn(); err == nil {
				return nil
			}
		}
	}
	return err
}

// Each calls fn once for every item: a loop over items, no retry.
func Each(items []string, fn func(string) error) error {
	for _, it := range items {
		if err := fn(it); err != nil {
			return err
		}
	}
	return nil
}

// Hook posts an event through Retry: the literal runs again after each failure.
func Hook(url string, event []byte) error {
	return Retry(3, func() error {
		_, err := http.Post(url, "application/json", bytes.NewReader(event)) // want `call of http.Post sends a POST request with no //once: promise, on a path that runs it again`
		return err
	})
}

// Hooks posts an event to each URL once, through Each.
func Hooks(urls []string, event []byte) error {
	return Each(urls, func(url string) error {
		_, err := http.Post(url, "application/json", bytes.NewReader(event))
		return err
	})
}

// Notify builds its request once and sends it from a literal Again retries. Its URL is
// its caller's, so the retried send is reported where the URL is known.
func Notify(url string, form []byte) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(form))
	if err != nil {
		return err
	}
	return Again([]int{1, 3}, func() error {
		_, err := http.DefaultClient.Do(req)
		return err
	})
}

// Ops notifies the operators through Notify, which retries.
func Ops(form []byte) error {
	return Notify("https://ops.example.com/hook", form) // want `call of retrylib.Notify sends a POST request with no //once: promise, on a path that runs it again`
}

// MailThen mails to, then runs fn again after each failure: a retry helper that does more
// than retry, whose own e-mail its callers report.
func MailThen(to string, fn func() error) error {
	if err := smtp.SendMail("mail.example.com:25", nil, "shop@example.com", []string{to}, []byte("hi")); err != nil {
		return err
	}
	var err error
	for i := 0; i < 3; i++ {
		if err = fn(); err == nil {
			return nil
		}
	}
	return err
}
