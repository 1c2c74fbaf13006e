// Package chatbot answers chat events through actions behind one interface.
package chatbot

import (
	"context"

	openai "github.com/sashabaranov/go-openai"

	"shop/chatclient"
)

type Event struct{ Text string }

// Action handles one event.
type Action interface {
	Handle(ctx context.Context, ev Event) error
}

// Reply answers the event through the client's thin Ask: the decision to ask is this
// action's, so it is reported here, not in the client nor at the dispatcher.
type Reply struct{ c *chatclient.Client }

func (r Reply) Handle(ctx context.Context, ev Event) error {
	_, err := r.c.Ask(ctx, []openai.ChatCompletionMessage{{Content: ev.Text}}) // want `call to \(\*chatclient.Client\).Ask reaches \(\*openai.Client\).CreateChatCompletion with no //once: promise: a retry runs \(and bills\) the completion again; declare a promise on Reply.Handle`
	return err
}

// Retry goes through the client's retrying method, whose finding is in the client: it
// adds none, and is no second port of the dispatcher's decision.
type Retry struct{ c *chatclient.Client }

func (r Retry) Handle(ctx context.Context, ev Event) error {
	_, err := r.c.AskAgain(ctx, []openai.ChatCompletionMessage{{Content: ev.Text}})
	return err
}

// Answer answers through the client's tool loop: the decision to ask is its own,
// reported here.
func Answer(ctx context.Context, c *chatclient.Client, ev Event) error {
	_, err := c.AskWithTools(ctx, []openai.ChatCompletionMessage{{Content: ev.Text}}, func(context.Context, openai.ChatCompletionMessage) (string, bool) { return "", false }) // want `call to \(\*chatclient.Client\).AskWithTools reaches \(\*openai.Client\).CreateChatCompletion with no //once: promise: a retry runs \(and bills\) the completion again; declare a promise on Answer`
	return err
}

// Patient goes through the client's retrying loop, whose finding is in the client.
func Patient(ctx context.Context, c *chatclient.Client, ev Event) error {
	_, err := c.AskPatiently(ctx, []openai.ChatCompletionMessage{{Content: ev.Text}}, func(error) bool { return true })
	return err
}

// Persist goes through the retry loop, whose finding is in the client.
type Persist struct{ c *chatclient.Client }

func (p Persist) Handle(ctx context.Context, ev Event) error {
	_, err := p.c.AskUntilAnswered(ctx, []openai.ChatCompletionMessage{{Content: ev.Text}})
	return err
}

// Dispatch runs each action on the event.
func Dispatch(ctx context.Context, actions []Action, ev Event) {
	for _, a := range actions {
		_ = a.Handle(ctx, ev)
	}
}
