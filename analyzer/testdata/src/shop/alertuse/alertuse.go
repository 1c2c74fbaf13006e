// Package alertuse calls the alerting package's dispatchers.
package alertuse

import "shop/alerting"

// Report tells every channel the run ended: a channel Notify does not handle.
func Report(text string) { _ = alerting.Notify(alerting.ByAll, text) }

// Finish says the same.
func Finish() { _ = alerting.Notify("all", "finished") }

// Escalate pages by email.
func Escalate(text string) { _ = alerting.Page(alerting.ByEmail, text) }

// Broadcast passes "all" to the functions that are no dispatchers.
func Broadcast(text string) {
	_ = alerting.Relay(alerting.ByAll, text)
	_ = alerting.Widen(alerting.ByAll, text)
	_ = alerting.Fall(alerting.ByAll, text)
}
