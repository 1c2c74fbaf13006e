// Package closureapi closes an account for an admin.
package closureapi

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"shop/closure"
)

type Admin struct{ ses *sesv2.Client }

// Close is an admin endpoint.
func (a *Admin) Close(w http.ResponseWriter, r *http.Request) {
	_ = closure.Close(r.Context(), a.ses, r.FormValue("email")) // want `call to closure.Close reaches http.Post with no //once: promise: a retry sends the POST again; declare a promise on Admin.Close or on closure.Close`
}
