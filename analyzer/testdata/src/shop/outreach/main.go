// Command outreach sends the weekly outreach: texts, emails and a model-written summary.
package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/smtp"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/mrz1836/postmark"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/resend/resend-go/v2"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/sendgrid/sendgrid-go"
	"github.com/sendgrid/sendgrid-go/helpers/mail"
	"github.com/twilio/twilio-go"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"
)

type Lead struct {
	ID    int64
	Phone string
	Email string
	Notes string
}

type app struct {
	twilio   *twilio.RestClient
	resend   *resend.Client
	postmark *postmark.Client
	grid     *sendgrid.Client
	sns      *sns.Client
	openai   openai.Client
	claude   anthropic.Client
	gpt      *goopenai.Client
	http     *http.Client
	hookURL  string
}

func (a *app) text(lead Lead) error {
	params := &openapi.CreateMessageParams{}
	params.SetTo(lead.Phone)
	params.SetFrom("+15550100")
	params.SetBody("Your weekly digest is ready")
	_, err := a.twilio.Api.CreateMessage(params) // want `call to \(\*twilio.RestClient\).Api.CreateMessage has no //once: promise and the provider takes no idempotency key: a retry sends the message again; declare a promise on app.text`
	return err
}

func (a *app) emailResend(ctx context.Context, lead Lead) error {
	_, err := a.resend.Emails.Send(&resend.SendEmailRequest{To: []string{lead.Email}, Subject: "Digest"}) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
	return err
}

func (a *app) emailResendKeyed(ctx context.Context, lead Lead, week string) error {
	_, err := a.resend.Emails.SendWithOptions(ctx,
		&resend.SendEmailRequest{To: []string{lead.Email}, Subject: "Digest"},
		&resend.SendEmailOptions{IdempotencyKey: fmt.Sprintf("digest/%d/%s", lead.ID, week)})
	return err
}

func (a *app) emailPostmark(ctx context.Context, lead Lead) error {
	_, err := a.postmark.SendEmail(ctx, postmark.Email{To: lead.Email, Subject: "Digest"}) // want `call to \(\*postmark.Client\).SendEmail has no //once: promise`
	return err
}

func (a *app) emailSendgrid(lead Lead) error {
	msg := mail.NewSingleEmail(mail.NewEmail("Shop", "shop@example.com"), "Digest", mail.NewEmail("", lead.Email), "hi", "<p>hi</p>")
	_, err := a.grid.Send(msg) // want `call to \(\*sendgrid.Client\).Send has no //once: promise`
	return err
}

func emailSMTP(lead Lead) error {
	return smtp.SendMail("localhost:25", nil, "shop@example.com", []string{lead.Email}, []byte("Subject: Digest\r\n\r\nhi")) // want `call to smtp.SendMail has no //once: promise`
}

func (a *app) publish(ctx context.Context, lead Lead) error {
	_, err := a.sns.Publish(ctx, &sns.PublishInput{
		TopicArn:               aws.String("arn:aws:sns:eu-west-1:1:leads.fifo"),
		Message:                aws.String(lead.Email),
		MessageGroupId:         aws.String("leads"),
		MessageDeduplicationId: aws.String(fmt.Sprint(lead.ID)),
	})
	return err
}

func (a *app) summarize(ctx context.Context, lead Lead) (string, error) {
	c, err := a.openai.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(lead.Notes)},
	}, option.WithHeader("Idempotency-Key", fmt.Sprintf("summary-%d", lead.ID)))
	if err != nil {
		return "", err
	}
	return c.Choices[0].Message.Content, nil
}

func (a *app) draft(ctx context.Context, lead Lead) (string, error) {
	m, err := a.claude.Messages.New(ctx, anthropic.MessageNewParams{ // want `call to \(anthropic.Client\).Messages.New has no idempotency key and no //once: promise: a retry runs \(and bills\) the model call again; send an Idempotency-Key header`
		Model:     anthropic.ModelClaudeSonnet4_5,
		MaxTokens: 512,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(lead.Notes)},
	})
	if err != nil {
		return "", err
	}
	return m.Content[0].Text, nil
}

// prompt builds the conversation; it sets no header.
func prompt(lead Lead) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet4_5,
		MaxTokens: 512,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(lead.Notes)},
	}
}

// keyed is the application's option carrying the Idempotency-Key header.
func keyed(lead Lead) option.RequestOption {
	return option.WithHeader("Idempotency-Key", fmt.Sprintf("lead-%d", lead.ID))
}

// redraft builds its request with a helper: the body is not an option, and carries no key.
func (a *app) redraft(ctx context.Context, lead Lead) error {
	_, err := a.claude.Messages.New(ctx, prompt(lead)) // want `call to \(anthropic.Client\).Messages.New has no idempotency key and no //once: promise`
	return err
}

// resummarize passes an option built by a helper, which may set the header: not reported.
func (a *app) resummarize(ctx context.Context, lead Lead) error {
	_, err := a.openai.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4o}, keyed(lead))
	return err
}

func (a *app) tagline(ctx context.Context, lead Lead) (string, error) {
	r, err := a.gpt.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{ // want `call to \(\*openai.Client\).CreateChatCompletion has no //once: promise`
		Model:    goopenai.GPT4o,
		Messages: []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: lead.Notes}},
	})
	if err != nil {
		return "", err
	}
	_, _ = a.gpt.ListModels(ctx)
	return r.Choices[0].Message.Content, nil
}

func (a *app) notifyHook(ctx context.Context, lead Lead) error {
	body := strings.NewReader(fmt.Sprintf(`{"lead":%d}`, lead.ID))
	resp, err := http.Post(a.hookURL, "application/json", body) // want `call to http.Post has no //once: promise`
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (a *app) pushCRM(ctx context.Context, lead Lead) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.hookURL, bytes.NewReader(nil))
	if err != nil {
		return err
	}
	resp, err := a.http.Do(req) // want `call to \(\*http.Client\).Do has no idempotency key and no //once: promise: a retry sends the request again`
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (a *app) pushCRMKeyed(ctx context.Context, lead Lead) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, a.hookURL, bytes.NewReader(nil))
	if err != nil {
		return err
	}
	req.Header.Set("Idempotency-Key", fmt.Sprintf("lead-%d", lead.ID))
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// sign sets the application's headers on a request to the CRM, the key among them.
func sign(req *http.Request, lead Lead) {
	req.Header.Set("Idempotency-Key", fmt.Sprintf("lead-%d", lead.ID))
	req.Header.Set("Content-Type", "application/json")
}

// pushCRMSigned hands its request to sign, which sets the key: not reported.
func (a *app) pushCRMSigned(ctx context.Context, lead Lead) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.hookURL, bytes.NewReader(nil))
	if err != nil {
		return err
	}
	sign(req, lead)
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (a *app) readCRM(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.hookURL, nil)
	if err != nil {
		return err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func main() {
	a := &app{}
	ctx := context.Background()
	lead := Lead{ID: 1}
	for _, step := range []func() error{
		func() error { return a.text(lead) },
		func() error { return a.emailResend(ctx, lead) },
		func() error { return a.emailResendKeyed(ctx, lead, "2026-48") },
		func() error { return a.emailPostmark(ctx, lead) },
		func() error { return a.emailSendgrid(lead) },
		func() error { return emailSMTP(lead) },
		func() error { return a.publish(ctx, lead) },
		func() error { _, err := a.summarize(ctx, lead); return err },
		func() error { _, err := a.draft(ctx, lead); return err },
		func() error { _, err := a.tagline(ctx, lead); return err },
		func() error { return a.redraft(ctx, lead) },
		func() error { return a.resummarize(ctx, lead) },
		func() error { return a.notifyHook(ctx, lead) },
		func() error { return a.pushCRM(ctx, lead) },
		func() error { return a.pushCRMKeyed(ctx, lead) },
		func() error { return a.pushCRMSigned(ctx, lead) },
		func() error { return a.readCRM(ctx) },
	} {
		if err := step(); err != nil {
			log.Print(err)
		}
	}
}
