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

// Tool runs the tool a model's reply asks for, and says whether it asked for one.
type Tool func(ctx context.Context, reply openai.ChatCompletionMessage) (string, bool)

// AskWithTools asks once, then again with the tools' results for as long as the model
// asks for tools: each later call is a new turn of the one conversation its caller
// started, and an error ends it (no retry). Whether to ask is its callers' decision, so
// it is judged at them, like Ask.
func (c *Client) AskWithTools(ctx context.Context, history []openai.ChatCompletionMessage, run Tool) (openai.ChatCompletionResponse, error) {
	resp, err := c.api.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: c.model, Messages: history})
	if err != nil {
		return resp, err
	}
	for len(resp.Choices) > 0 {
		result, asked := run(ctx, resp.Choices[0].Message)
		if !asked {
			break
		}
		history = append(history, resp.Choices[0].Message, openai.ChatCompletionMessage{Role: "tool", Content: result})
		resp, err = c.api.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: c.model, Messages: history})
		if err != nil {
			return resp, err
		}
	}
	return resp, nil
}

// AskUntilAnswered calls again after an error: a retry loop, its own decision, reported
// here though its first call is the same.
func (c *Client) AskUntilAnswered(ctx context.Context, history []openai.ChatCompletionMessage) (openai.ChatCompletionResponse, error) {
	resp, err := c.api.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: c.model, Messages: history}) // want `declare a promise on Client.AskUntilAnswered \(ONCE001\)$`
	for err != nil {
		resp, err = c.api.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: c.model, Messages: history})
	}
	return resp, err
}

// AskPatiently goes round again when an error is retryable: a retry loop, though its
// error branch ends in a return, reported here.
func (c *Client) AskPatiently(ctx context.Context, history []openai.ChatCompletionMessage, retryable func(error) bool) (openai.ChatCompletionResponse, error) {
	resp, err := c.api.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: c.model, Messages: history}) // want `declare a promise on Client.AskPatiently \(ONCE001\)$`
	if err != nil {
		return resp, err
	}
	for len(resp.Choices) == 0 {
		resp, err = c.api.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: c.model, Messages: history})
		if err != nil {
			if retryable(err) {
				continue
			}
			return resp, err
		}
	}
	return resp, nil
}
