// Package closure closes accounts. Close reaches the cancellation email, reported in
// package cancel, and posts the account to the archive, reported nowhere below: its
// callers are judged for the archive, and their findings name it, not the email.
package closure

import (
	"context"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"shop/cancel"
)

// Close cancels the subscription and archives the account. It is called here and from
// closureapi: each caller decides.
func Close(ctx context.Context, ses *sesv2.Client, to string) error {
	if err := cancel.Cancelled(ctx, ses, to); err != nil {
		return err
	}
	_, err := http.Post("https://archive.example/accounts", "application/json", strings.NewReader(to))
	return err
}

// CloseSelf closes the caller's own account.
func CloseSelf(ctx context.Context, ses *sesv2.Client, to string) error {
	return Close(ctx, ses, to) // want `call to closure.Close reaches http.Post with no //once: promise: a retry sends the POST again; declare a promise on CloseSelf or on closure.Close`
}
