// Package app is the golden case of a module whose path has no dot: its generated file
// imports myapp/internal/x among the packages that are not the standard library's, after
// context and net/http.
package app

import (
	"context"
	"net/http"

	"myapp/internal/x"
)

// Page pages the on-call engineer once per outage of an alert.
//
//once:episode key=id
func Page(ctx context.Context, client *http.Client, id x.AlertID) error { return nil }
