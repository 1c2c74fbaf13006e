// Package retries calls a paid model through a client that retries by itself, and
// through a loop of its own that calls again after a failure.
package retries

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/openai/openai-go/v3"
)

// Summarize posts to OpenAI through a client that sends again when a request fails.
func Summarize(text string) error {
	c := retryablehttp.NewClient()
	req, err := retryablehttp.NewRequest("POST", "https://api.openai.com/v1/responses", text)
	if err != nil {
		return err
	}
	_, err = c.Do(req) // want `call of \(\*retryablehttp.Client\).Do to https://api.openai.com/v1/responses calls the model with no //once: promise`
	return err
}

// Ask asks again after any error, timeouts included: a completion that timed out after
// the model did the work is paid twice.
func Ask(ctx context.Context, client *openai.Client, prompt string) (*openai.ChatCompletion, error) {
	var err error
	for i := 0; i < 3; i++ {
		var res *openai.ChatCompletion
		res, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)}}) // want `call of \(\*openai.ChatCompletionService\).New runs \(and bills\) the completion with no //once: promise`
		if err == nil {
			return res, nil
		}
		time.Sleep(time.Second)
	}
	return nil, err
}

// Each asks once per prompt: the loop goes on after a success too, so it retries
// nothing, and nothing runs Each again.
func Each(ctx context.Context, client *openai.Client, prompts []string) error {
	var errs []error
	for _, p := range prompts {
		if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(p)}}); err != nil {
			errs = append(errs, err)
			continue
		}
	}
	return errors.Join(errs...)
}

// Pages posts a GET-like search to a read endpoint: no effect at all.
func Verify(token string) error {
	c := retryablehttp.NewClient()
	_, err := c.Post("https://www.google.com/recaptcha/api/siteverify", "application/x-www-form-urlencoded", token)
	return err
}
