// Package b texts customers; package a imports it.
package b

import (
	"net/http"

	"example.com/layers/sms"
)

var c = &sms.Client{}

func text(to string) error {
	return c.Send(sms.Message{To: to})
}

// Handle texts the one who asked.
func Handle(w http.ResponseWriter, r *http.Request) { _ = text(r.FormValue("to")) }

// Run texts everyone, keyed.
func Run(c *sms.Client, to []string) {
	for _, p := range to {
		_ = c.Send(sms.Message{To: p, RequestID: "run-" + p})
	}
}
