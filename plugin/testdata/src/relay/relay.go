// Package relay books couriers through a gateway that takes no idempotency key.
package relay

import "net/http"

// Dispatch books a courier for a parcel.
func Dispatch(parcel string) error { return nil }

// Book books a courier from an HTTP request: a client's retry books another.
func Book(w http.ResponseWriter, r *http.Request) {
	Dispatch(r.FormValue("parcel")) // want `call of relay.Dispatch dispatches the courier with no //once: promise, on a path that runs it again`
}
