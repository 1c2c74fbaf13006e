// Package requestconfig is a stub of openai-go's request configuration.
package requestconfig

import "net/http"

type RequestConfig struct {
	Request    *http.Request
	MaxRetries int
}

type RequestOption interface {
	Apply(*RequestConfig) error
}

type RequestOptionFunc func(*RequestConfig) error

func (s RequestOptionFunc) Apply(r *RequestConfig) error { return s(r) }
