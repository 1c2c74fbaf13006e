// Package bot answers chat messages with a model, through a chain of actions that each
// say whether the next one runs.
package bot

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/patrickmn/go-cache"
	"github.com/sashabaranov/go-openai"

	"procset/msgcache"
)

// Handler holds what the actions share.
type Handler struct {
	store  msgcache.Store
	users  msgcache.Store
	tr     *msgcache.Translations
	counts map[string]int
	ai     *openai.Client
	db     *sql.DB
}

// Info is one incoming message.
type Info struct {
	msgID  *string
	userID string
	text   string
}

// Action is one step of the chain; false stops it.
type Action interface {
	Execute(ctx context.Context, h *Handler, in *Info) bool
}

// Handle runs the chain.
func Handle(ctx context.Context, h *Handler, in *Info) {
	for _, a := range []Action{uniqueAction{}, answerAction{}} {
		if !a.Execute(ctx, h, in) {
			return
		}
	}
}

type uniqueAction struct{}

// Execute lets a message through the first time its ID is seen: the chat platform
// redelivers an event it got no answer to in time.
func (uniqueAction) Execute(ctx context.Context, h *Handler, in *Info) bool {
	if h.store.IfProcessed(*in.msgID) { // want `the go-cache behind h.store, checked through \(msgcache.Store\).IfProcessed and written through \(msgcache.Store\).TagProcessed, is the only guard of \(bot.uniqueAction\).Execute against a redelivered \*in.msgID: .*\(the call to \(\*openai.Client\).CreateChatCompletion`
		return false
	}
	h.store.TagProcessed(*in.msgID)
	return true
}

type answerAction struct{}

// Execute asks the model and lets the chain go on when it answered.
func (answerAction) Execute(ctx context.Context, h *Handler, in *Info) bool {
	_, err := h.ai.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "gpt-4o"}) // want `call to \(\*openai.Client\).CreateChatCompletion has no //once: promise`
	return err == nil
}

// welcomeOnce lets a user's first message through once: the key is a user, not a
// message a platform redelivers (a greeting rule, not a redelivery guard).
func welcomeOnce(h *Handler, in *Info) bool {
	if h.users.IfProcessed(in.userID) {
		return false
	}
	h.users.TagProcessed(in.userID)
	return true
}

// translate keeps a value per message: the write stores what was made, a cache of values.
func translate(h *Handler, msgID, text string) bool {
	if h.tr.Has(msgID) {
		return false
	}
	h.tr.Save(msgID, strings.ToUpper(text))
	return true
}

// underLimit counts messages per ID: a counter, not a membership gate.
func underLimit(h *Handler, msgID string) bool {
	if h.counts[msgID] >= 3 {
		return false
	}
	h.counts[msgID]++
	return true
}

// claimed puts a database claim beside the set: the insert that refuses a second row is
// the promise, the set only a cache in front of it.
func claimed(ctx context.Context, h *Handler, in *Info) bool {
	if h.store.IfProcessed(*in.msgID) {
		return false
	}
	h.store.TagProcessed(*in.msgID)
	res, err := h.db.ExecContext(ctx, "INSERT INTO handled (msg_id) VALUES ($1) ON CONFLICT DO NOTHING", *in.msgID)
	if err != nil {
		return false
	}
	n, _ := res.RowsAffected()
	return n == 1
}

var (
	summarized = cache.New(time.Hour, time.Hour)
	answers    = cache.New(time.Hour, time.Hour)
)

// summarizeOnce asks for a summary of an event once, as long as the process remembers.
func summarizeOnce(ctx context.Context, h *Handler, eventID string) error {
	if _, found := summarized.Get(eventID); found { // want `package-level go-cache summarized is checked then written as the guard of the call to \(\*openai.Client\).CreateChatCompletion`
		return nil
	}
	summarized.Set(eventID, true, time.Hour)
	_, err := h.ai.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "gpt-4o"})
	return err
}

// answer keeps the model's answer to each prompt: the cache stores what the call made,
// a cache of values, not a guard.
func answer(ctx context.Context, h *Handler, prompt string) (string, error) {
	if v, found := answers.Get(prompt); found {
		return v.(string), nil
	}
	resp, err := h.ai.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "gpt-4o"}) // want `call to \(\*openai.Client\).CreateChatCompletion has no //once: promise`
	if err != nil || len(resp.Choices) == 0 {
		return "", err
	}
	answers.Set(prompt, resp.Choices[0].Message.Content, time.Hour)
	return resp.Choices[0].Message.Content, nil
}

var _, _, _, _, _, _ = welcomeOnce, translate, underLimit, claimed, summarizeOnce, answer
