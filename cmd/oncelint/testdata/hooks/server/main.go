// Command server relays events, posts receipts through the module's own retrying client,
// and posts to partners through a vendored client that retries by itself.
package main

import (
	"net/http"
	"os"

	"example.com/courier"

	"example.com/hooks/httpx"
	"example.com/hooks/relay"
	_ "example.com/hooks/webhook"
)

var audit *courier.Batcher

func receipt(w http.ResponseWriter, r *http.Request) {
	_ = httpx.Post(os.Getenv("RECEIPT_URL"), []byte(r.FormValue("order")))
	_ = courier.New().Post(os.Getenv("PARTNER_URL"), []byte(r.FormValue("order")))
	audit.Add([]byte(r.FormValue("order")))
}

func main() {
	audit = courier.Start(os.Getenv("AUDIT_URL"))
	http.HandleFunc("/receipt", receipt)
	http.HandleFunc("/events", relay.Serve)
	go relay.Retry(nil, "started")
	http.ListenAndServe(":8080", nil)
}
