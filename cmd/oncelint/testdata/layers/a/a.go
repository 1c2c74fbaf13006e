// Package a texts too.
package a

import (
	"net/http"

	"example.com/layers/b"
	"example.com/layers/sms"
)

var c = &sms.Client{}

func remind(to string) error {
	return c.Send(sms.Message{To: to})
}

// Handle reminds the one who asked.
func Handle(w http.ResponseWriter, r *http.Request) {
	b.Run(c, []string{r.FormValue("to")})
	_ = remind(r.FormValue("to"))
}
