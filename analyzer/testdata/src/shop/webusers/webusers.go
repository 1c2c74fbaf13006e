// Package webusers calls webcalls.Client.Send from another package: the POST is an
// effect reported at its call, the GET is not.
package webusers

import (
	"net/http"

	"shop/webcalls"
)

func Refresh(c *webcalls.Client) error { return c.Send(http.MethodGet, "/feed") }

func Publish(c *webcalls.Client) error {
	return c.Send(http.MethodPost, "/feed") // want `call to \(\*webcalls.Client\).Send reaches \(\*http.Client\).Do with no //once: promise: a retry sends the request again`
}
