// Package option is a stub of openai-go's request options.
package option

import "github.com/openai/openai-go/v3/internal/requestconfig"

type RequestOption = requestconfig.RequestOption

// WithHeader returns a RequestOption that sets the header value to the associated key.
func WithHeader(key, value string) RequestOption {
	return requestconfig.RequestOptionFunc(func(r *requestconfig.RequestConfig) error {
		r.Request.Header.Set(key, value)
		return nil
	})
}

// WithMaxRetries returns a RequestOption that sets the maximum number of retries.
func WithMaxRetries(retries int) RequestOption {
	return requestconfig.RequestOptionFunc(func(r *requestconfig.RequestConfig) error {
		r.MaxRetries = retries
		return nil
	})
}

// WithAPIKey returns a RequestOption that sets the client setting "api_key".
func WithAPIKey(value string) RequestOption {
	return requestconfig.RequestOptionFunc(func(r *requestconfig.RequestConfig) error { return nil })
}
