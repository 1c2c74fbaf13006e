// Package apiclient sends requests whose method and URL its callers give, through a
// helper of its own: where a request goes, and so whether it is an effect, is decided in
// the packages that call it.
package apiclient

import (
	"io"
	"net/http"
)

// Do sends the request its caller describes.
func Do(method, url string, body io.Reader) error {
	return send(method, url, body)
}

func send(method, url string, body io.Reader) error {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
