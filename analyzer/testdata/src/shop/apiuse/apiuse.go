// Package apiuse sends through another package's transport: a POST to a URL the
// catalogue lists as a read (a token endpoint, a mailing list's subscriber set) is no
// effect; a POST elsewhere is.
package apiuse

import (
	"strings"

	"shop/apiclient"
)

const base = "https://api.shop.test"

// Token asks for an access token: a read.
func Token(secret string) error {
	return apiclient.Do("POST", base+"/oauth/token", strings.NewReader(secret))
}

// Join adds an address to the mailing list's subscribers, which the list keeps one of.
func Join(listURL, email string) error {
	return apiclient.Do("POST", listURL+"/api/subscribers", strings.NewReader(email))
}

// Order places an order: an effect.
func Order(item string) error {
	return apiclient.Do("POST", base+"/orders", strings.NewReader(item)) // want `call to apiclient.Do reaches \(\*http.Client\).Do \(through apiclient.send\) with no //once: promise: a retry sends the request again; declare a promise on Order`
}
