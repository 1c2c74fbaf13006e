// Command server mails from HTTP handlers, through vendored libraries.
package main

import (
	"net/http"

	"example.com/mail"
	"example.com/mail/fanout"
	"example.com/mail/logs"
	"example.com/mail/notify"
)

func receipt(w http.ResponseWriter, r *http.Request) {
	mail.Notify()
}

func order(w http.ResponseWriter, r *http.Request) {
	notify.Shop()
}

func refund(w http.ResponseWriter, r *http.Request) {
	logs.Error("refund refused")
	fanout.All("refund asked")
}

func main() {
	logs.Mail("ops@example.com")
	http.HandleFunc("/receipt", receipt)
	http.HandleFunc("/order", order)
	http.HandleFunc("/refund", refund)
	http.ListenAndServe(":8080", nil)
}
