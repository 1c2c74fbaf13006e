// Package option is a stub of anthropic-sdk-go's request options.
package option

import "net/http"

type RequestConfig struct{ Request *http.Request }

type RequestOption = func(*RequestConfig) error

// WithHeader returns a RequestOption that sets the header value to the associated key.
func WithHeader(key, value string) RequestOption {
	return func(r *RequestConfig) error { r.Request.Header.Set(key, value); return nil }
}
