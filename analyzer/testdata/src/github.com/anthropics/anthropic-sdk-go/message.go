// Package anthropic is a stub of anthropic-sdk-go.
package anthropic

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/option"
)

type Model = string

const ModelClaudeSonnet4_5 Model = "claude-sonnet-4-5"

type MessageParam struct{ Content string }

func NewUserMessage(text string) MessageParam { return MessageParam{Content: text} }

type MessageNewParams struct {
	MaxTokens int64
	Messages  []MessageParam
	Model     Model
}

type ContentBlockUnion struct{ Text string }
type Message struct{ Content []ContentBlockUnion }

type MessageService struct{ Options []option.RequestOption }

// New sends a structured list of input messages and returns the model's next message.
func (r *MessageService) New(ctx context.Context, body MessageNewParams, opts ...option.RequestOption) (res *Message, err error) {
	return &Message{}, nil
}

type Client struct {
	Options  []option.RequestOption
	Messages MessageService
}

func NewClient(opts ...option.RequestOption) (r Client) { return Client{Options: opts} }
