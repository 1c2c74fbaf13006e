// Package malformed compiles, with a malformed directive.
package malformed

// Send sends.
//
//once:forevr key=to
func Send(to string) error { return nil }
