// Package x is a package of a module whose path has no dot (myapp): its import path,
// myapp/internal/x, has the shape of a standard library path, and is not one.
package x

// AlertID names an alert.
type AlertID string
