// Package openai is a stub of sashabaranov/go-openai.
package openai

import "context"

type Client struct{ token string }

func NewClient(authToken string) *Client { return &Client{token: authToken} }

type ChatCompletionMessage struct {
	Role    string
	Content string
}

const ChatMessageRoleUser = "user"
const GPT4o = "gpt-4o"

type ChatCompletionRequest struct {
	Model    string
	Messages []ChatCompletionMessage
}

type ChatCompletionChoice struct{ Message ChatCompletionMessage }
type ChatCompletionResponse struct{ Choices []ChatCompletionChoice }

// CreateChatCompletion is an API call to create a completion for a chat message.
func (c *Client) CreateChatCompletion(ctx context.Context, request ChatCompletionRequest) (response ChatCompletionResponse, err error) {
	return ChatCompletionResponse{}, nil
}

type ModelsList struct{}

// ListModels lists the currently available models.
func (c *Client) ListModels(ctx context.Context) (models ModelsList, err error) {
	return ModelsList{}, nil
}
