// Command server mails from HTTP handlers, through vendored libraries.
package main

import (
	"net/http"

	"example.com/mail"
	"example.com/mail/notify"
)

func receipt(w http.ResponseWriter, r *http.Request) {
	mail.Notify()
}

func order(w http.ResponseWriter, r *http.Request) {
	notify.Shop()
}

func main() {
	http.HandleFunc("/receipt", receipt)
	http.HandleFunc("/order", order)
	http.ListenAndServe(":8080", nil)
}
