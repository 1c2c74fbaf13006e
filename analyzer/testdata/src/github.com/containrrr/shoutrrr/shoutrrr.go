// Package shoutrrr is a stub of the notification library's API the tests call.
package shoutrrr

// Send sends message to the service rawURL names.
func Send(rawURL string, message string) error { return nil }
