// Package httpx is the module's own client: it posts again after an error.
package httpx

import (
	"bytes"
	"net/http"
)

// Post posts body to url, again after an error, up to three times.
func Post(url string, body []byte) (err error) {
	for i := 0; i < 3; i++ {
		var resp *http.Response
		if resp, err = http.Post(url, "application/json", bytes.NewReader(body)); err == nil {
			return resp.Body.Close()
		}
	}
	return err
}
