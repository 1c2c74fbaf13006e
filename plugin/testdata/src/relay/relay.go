// Package relay books couriers through a gateway that takes no idempotency key.
package relay

// Dispatch books a courier for a parcel.
func Dispatch(parcel string) error { return nil }

func book(parcel string) error {
	return Dispatch(parcel) // want `call to relay.Dispatch has no //once: promise and the provider takes no idempotency key: a retry dispatches the courier again`
}
