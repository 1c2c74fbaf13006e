// Package onceui is the operator console of once: an http.Handler that shows what once's
// guards hold (uncertain outcomes, open claims, latches, allowances, leases, follow-ups and
// an operation's ledger) and lets an operator resolve, close, rearm, refund, reset, release
// and revive, each action audited.
//
// An app mounts it under its own admin routes, behind its own authentication, and tells it
// who acts (Config.User). The pages are server-rendered and work without JavaScript; every
// action is a POST that carries a CSRF token, passes a same-origin check, asks for a reason,
// and goes through the runtime's operator functions (onceops.Audit), which write the audit
// row in the transaction of the change. With Config.ReadOnly every action is refused.
//
// cmd/onceui serves it on its own for a database URL.
package onceui
