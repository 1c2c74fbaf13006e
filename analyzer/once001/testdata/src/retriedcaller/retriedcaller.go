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
