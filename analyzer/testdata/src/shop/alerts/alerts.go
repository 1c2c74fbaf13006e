// Package alerts pages the on-call engineer and emails customers about incidents.
package alerts

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/resend/resend-go/v2"
	"github.com/twilio/twilio-go"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"
)

type Incident struct {
	ID       int64
	Provider string
	Severity string
}

type Customer struct {
	ID    int64
	Email string
}

var (
	mu    sync.Mutex
	paged = map[int64]bool{}

	alerted sync.Map

	lastSent = map[int64]time.Time{}

	clients = map[string]*twilio.RestClient{}
)

type Pager struct {
	twilio *twilio.RestClient
	phone  string
}

// Page texts the on-call once per incident, as long as this process lives.
func (p *Pager) Page(ctx context.Context, inc Incident) error {
	mu.Lock()
	if paged[inc.ID] { // want `package-level map paged is checked then written as the guard of the call to \(\*twilio.RestClient\).Api.CreateMessage, but it lasts one process: after a restart or on a second replica a retry sends the message again`
		mu.Unlock()
		return nil
	}
	paged[inc.ID] = true
	mu.Unlock()
	params := &openapi.CreateMessageParams{}
	params.SetTo(p.phone)
	params.SetBody(fmt.Sprintf("incident %d: %s is %s", inc.ID, inc.Provider, inc.Severity))
	_, err := p.twilio.Api.CreateMessage(params)
	return err
}

// Blocked texts that a provider is blocked, once per provider.
func (p *Pager) Blocked(ctx context.Context, provider string) error {
	if _, loaded := alerted.LoadOrStore(provider, true); loaded { // want `package-level sync.Map alerted is checked then written as the guard`
		return nil
	}
	params := &openapi.CreateMessageParams{}
	params.SetTo(p.phone)
	params.SetBody(provider + " is blocked")
	_, err := p.twilio.Api.CreateMessage(params)
	return err
}

type Mailer struct {
	resend *resend.Client
	sns    *sns.Client
	mu     sync.Mutex
	told   map[int64]struct{}
	cache  map[int64]string
}

// Tell emails a customer about an incident; the set lives as long as the Mailer.
func (m *Mailer) Tell(ctx context.Context, c Customer, inc Incident) error {
	m.mu.Lock()
	_, done := m.told[c.ID] // want `map field m.told is checked then written as the guard of the call to \(\*resend.Client\).Emails.Send`
	m.told[c.ID] = struct{}{}
	m.mu.Unlock()
	if done {
		return nil
	}
	_, err := m.resend.Emails.Send(&resend.SendEmailRequest{To: []string{c.Email}, Subject: "Incident"})
	return err
}

// TellKeyed checks the set only to save a request: the provider's key is the promise.
func (m *Mailer) TellKeyed(ctx context.Context, c Customer, inc Incident) error {
	m.mu.Lock()
	_, done := m.told[c.ID]
	m.told[c.ID] = struct{}{}
	m.mu.Unlock()
	if done {
		return nil
	}
	_, err := m.resend.Emails.SendWithOptions(ctx, &resend.SendEmailRequest{To: []string{c.Email}},
		&resend.SendEmailOptions{IdempotencyKey: fmt.Sprintf("incident/%d/customer/%d", inc.ID, c.ID)})
	return err
}

// Broadcast records when each customer was last told, after sending: a record, not a
// guard. The batch-local set only drops duplicate addresses within one call.
func (m *Mailer) Broadcast(ctx context.Context, customers []Customer, inc Incident) error {
	seen := map[string]bool{}
	for _, c := range customers {
		if seen[c.Email] {
			continue
		}
		seen[c.Email] = true
		_, err := m.sns.Publish(ctx, &sns.PublishInput{
			Message:                aws.String(c.Email),
			MessageDeduplicationId: aws.String(fmt.Sprintf("%d-%d", inc.ID, c.ID)),
		})
		if err != nil {
			return err
		}
		lastSent[c.ID] = time.Now()
	}
	return nil
}

// Subject memoizes a computed subject line: no effect follows the check.
func (m *Mailer) Subject(inc Incident) string {
	if s, ok := m.cache[inc.ID]; ok {
		return s
	}
	s := fmt.Sprintf("[%s] %s", inc.Severity, inc.Provider)
	m.cache[inc.ID] = s
	return s
}

// Degraded texts once per episode of a provider being degraded; the map in front only
// saves a database round trip.
//
//once:episode key=provider
func (p *Pager) Degraded(ctx context.Context, provider string) error {
	if _, loaded := alerted.LoadOrStore("degraded/"+provider, true); loaded {
		return nil
	}
	params := &openapi.CreateMessageParams{}
	params.SetTo(p.phone)
	params.SetBody(provider + " is degraded")
	_, err := p.twilio.Api.CreateMessage(params)
	return err
}

// textFrom texts from the customer's own account, through a client the map caches per
// account: the text goes out whether or not the client was cached, so the map guards
// nothing, and the unkeyed text is reported as it is.
func textFrom(ctx context.Context, account, phone, body string) error {
	mu.Lock()
	c, ok := clients[account]
	if !ok {
		c = twilio.NewRestClient()
		clients[account] = c
	}
	mu.Unlock()
	params := &openapi.CreateMessageParams{}
	params.SetTo(phone)
	params.SetBody(body)
	_, err := c.Api.CreateMessage(params) // want `call to \(\*twilio.RestClient\).Api.CreateMessage has no //once: promise and the provider takes no idempotency key`
	return err
}

// textOnce texts once per customer, through textFrom: the map is its guard.
func (p *Pager) textOnce(ctx context.Context, c Customer, body string) error {
	if _, loaded := alerted.LoadOrStore(c.ID, true); loaded { // want `package-level sync.Map alerted is checked then written as the guard of the call to alerts.textFrom`
		return nil
	}
	return textFrom(ctx, "shop", p.phone, body)
}

var cancels = map[int64]context.CancelFunc{}

// Repage cancels a page still being sent for the incident and sends it again: the map
// holds cancel functions, and the text is sent whatever it held, so it guards nothing
// (no ONCE003); the text itself has no promise (ONCE001).
func (p *Pager) Repage(ctx context.Context, inc Incident) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mu.Lock()
	if earlier, ok := cancels[inc.ID]; ok {
		earlier()
	}
	cancels[inc.ID] = cancel
	mu.Unlock()
	params := &openapi.CreateMessageParams{}
	params.SetTo(p.phone)
	_, err := p.twilio.Api.CreateMessage(params) // want `call to \(\*twilio.RestClient\).Api.CreateMessage has no //once: promise`
	return err
}
