// Command server answers the warehouse's webhooks.
package main

import (
	"log"
	"net/http"

	"example.com/app/mailer"
	"example.com/app/notify"
	"example.com/gateway"
)

var (
	m  = &mailer.Mailer{Relay: "localhost:25", From: "shop@example.com"}
	gw = &gateway.Client{URL: "http://gateway.internal"}
)

func shipped(w http.ResponseWriter, r *http.Request) {
	if err := notify.Shipped(m, r.FormValue("email"), r.FormValue("order")); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

func returned(w http.ResponseWriter, r *http.Request) {
	if err := m.Send(r.FormValue("email"), "Your return arrived"); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
	gw.Publish("returns", r.FormValue("order"))
}

func main() {
	http.HandleFunc("POST /hooks/shipped", shipped)
	http.HandleFunc("POST /hooks/returned", returned)
	log.Fatal(http.ListenAndServe("localhost:8080", nil))
}
