// Package retries calls a paid model through a client that retries by itself, and
// through a loop of its own that calls again after a failure.
package retries

import (
	"context"
	"errors"
	"net/smtp"
	"sync"
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

// Verify posts to a read endpoint: no effect at all.
func Verify(token string) error {
	c := retryablehttp.NewClient()
	_, err := c.Post("https://www.google.com/recaptcha/api/siteverify", "application/x-www-form-urlencoded", token)
	return err
}

// Broadcast mails every address from a goroutine of its own, gathers the addresses whose
// send failed, and mails those again: a send that timed out after the server took the
// message delivers it twice.
func Broadcast(addrs []string, msg []byte) {
	var mu sync.Mutex
again:
	var failed []string
	var wg sync.WaitGroup
	for _, to := range addrs {
		wg.Add(1)
		go func(to string) {
			defer wg.Done()
			if err := smtp.SendMail("mail.example.com:25", nil, "shop@example.com", []string{to}, msg); err != nil { // want `call of smtp.SendMail sends the email with no //once: promise, on a path that runs it again`
				mu.Lock()
				failed = append(failed, to)
				mu.Unlock()
			}
		}(to)
	}
	wg.Wait()
	if len(failed) > 0 {
		addrs = failed
		goto again
	}
}

// Gather mails every address once, from goroutines, and returns those that failed: nothing
// mails them again.
func Gather(addrs []string, msg []byte) []string {
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for _, to := range addrs {
		wg.Add(1)
		go func(to string) {
			defer wg.Done()
			if err := smtp.SendMail("mail.example.com:25", nil, "shop@example.com", []string{to}, msg); err != nil {
				mu.Lock()
				failed = append(failed, to)
				mu.Unlock()
			}
		}(to)
	}
	wg.Wait()
	return failed
}

// Pages mails each page of addresses from goroutines, counting the sends made, failed or
// not, and goes on to the next page while the last one sent anything: the loop goes on
// after successes, and retries nothing.
func Pages(next func() []string, msg []byte) {
	var mu sync.Mutex
more:
	var made []string
	var wg sync.WaitGroup
	for _, to := range next() {
		wg.Add(1)
		go func(to string) {
			defer wg.Done()
			if err := smtp.SendMail("mail.example.com:25", nil, "shop@example.com", []string{to}, msg); err != nil {
				return
			}
			mu.Lock()
			made = append(made, to)
			mu.Unlock()
		}(to)
	}
	wg.Wait()
	if len(made) > 0 {
		goto more
	}
}
