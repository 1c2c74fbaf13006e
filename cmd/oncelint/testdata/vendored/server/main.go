// Command server mails a receipt from an HTTP handler, through a vendored library.
package main

import (
	"net/http"

	"example.com/mail"
)

func receipt(w http.ResponseWriter, r *http.Request) {
	mail.Notify()
}

func main() {
	http.HandleFunc("/receipt", receipt)
	http.ListenAndServe(":8080", nil)
}
