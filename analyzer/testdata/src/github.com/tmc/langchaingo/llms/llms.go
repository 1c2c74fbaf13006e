// Package llms is a stub of langchaingo's llms package.
package llms

import "context"

type CallOption func(*CallOptions)
type CallOptions struct{ Temperature float64 }
type MessageContent struct{ Role string }
type ContentResponse struct{ Choices []string }

// Model is an LLM that can generate content.
type Model interface {
	GenerateContent(ctx context.Context, messages []MessageContent, options ...CallOption) (*ContentResponse, error)
	Call(ctx context.Context, prompt string, options ...CallOption) (string, error)
}

// GenerateFromSinglePrompt asks the model for one completion of one prompt.
func GenerateFromSinglePrompt(ctx context.Context, llm Model, prompt string, options ...CallOption) (string, error) {
	return "", nil
}

// WithTemperature sets the temperature.
func WithTemperature(t float64) CallOption { return func(o *CallOptions) { o.Temperature = t } }
