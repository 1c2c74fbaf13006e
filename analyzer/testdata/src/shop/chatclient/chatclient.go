// Package chatclient is the application's own client of a chat model: thin methods that
// pass on what they are given, and one that retries by itself.
package chatclient

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

type Client struct {
	api   *openai.Client
	model string
}

// Ask passes the conversation it is given on to the model, unconditionally: whether to
// ask is its callers' decision, so it is judged at them (see shop/chatbot).
func (c *Client) Ask(ctx context.Context, history []openai.ChatCompletionMessage) (openai.ChatCompletionResponse, error) {
	req := openai.ChatCompletionRequest{Model: c.model, Messages: history}
	return c.api.CreateChatCompletion(ctx, req)
}

// AskAgain retries the model call in its own loop: the repeat is its decision, reported
// here.
func (c *Client) AskAgain(ctx context.Context, history []openai.ChatCompletionMessage) (resp openai.ChatCompletionResponse, err error) {
	for range 3 {
		resp, err = c.api.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: c.model, Messages: history}) // want `declare a promise on Client.AskAgain \(ONCE001\)$`
		if err == nil {
			return resp, nil
		}
	}
	return resp, err
}

// Summarize writes its own prompt: it decides what is asked, and is reported here.
func (c *Client) Summarize(ctx context.Context, text string) (openai.ChatCompletionResponse, error) {
	prompt := fmt.Sprintf("Summarize: %s", text)
	return c.api.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: c.model, Messages: []openai.ChatCompletionMessage{{Content: prompt}}}) // want `declare a promise on Client.Summarize \(ONCE001\)$`
}
