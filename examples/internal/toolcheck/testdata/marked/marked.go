// Package marked is a naive twin in miniature: one bug, marked where oncelint reports it.
package marked

import (
	"bytes"
	"net/http"
)

// Handle answers a request by emailing the owner.
func Handle(w http.ResponseWriter, r *http.Request) {
	if err := notify([]byte(`{}`)); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

// notify emails the owner.
func notify(body []byte) error {
	resp, err := http.Post("http://mail.test/v1/emails", "application/json", bytes.NewReader(body)) // ONCE001: no key, a retry emails again
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
