// Package openai is a stub of openai-go v3.
package openai

import (
	"context"

	"github.com/openai/openai-go/v3/option"
)

type ChatCompletionMessageParamUnion struct{ Content string }

func UserMessage(content string) ChatCompletionMessageParamUnion {
	return ChatCompletionMessageParamUnion{Content: content}
}

type ChatModel = string

const ChatModelGPT4o ChatModel = "gpt-4o"

type ChatCompletionNewParams struct {
	Messages []ChatCompletionMessageParamUnion
	Model    ChatModel
}

type ChatCompletionMessage struct{ Content string }
type ChatCompletionChoice struct{ Message ChatCompletionMessage }
type ChatCompletion struct{ Choices []ChatCompletionChoice }

type ChatCompletionService struct{ Options []option.RequestOption }

// New creates a model response for the given chat conversation.
func (r *ChatCompletionService) New(ctx context.Context, body ChatCompletionNewParams, opts ...option.RequestOption) (res *ChatCompletion, err error) {
	return &ChatCompletion{}, nil
}

type ChatService struct {
	Options     []option.RequestOption
	Completions ChatCompletionService
}

type Client struct {
	Options []option.RequestOption
	Chat    ChatService
}

func NewClient(opts ...option.RequestOption) (r Client) { return Client{Options: opts} }
