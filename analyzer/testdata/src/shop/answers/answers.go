// Package answers answers a user's question with a model, and suggests follow-ups.
package answers

import (
	"context"

	"github.com/tmc/langchaingo/llms"
)

// Answer is the endpoint: it asks the model for the answer, then has followUps ask it
// for suggestions. followUps has no other caller, so it is part of Answer's decision: one
// finding, at Answer, names both calls, and a promise on Answer covers them.
func Answer(ctx context.Context, m llms.Model, question string) (string, error) {
	answer, err := m.Call(ctx, question) // want `call to \(llms.Model\).Call has no //once: promise and the provider takes no idempotency key: a retry runs \(and bills\) the model call again; declare a promise on Answer; Answer also calls answers.followUps with no promise, which the same promise covers`
	if err != nil {
		return "", err
	}
	_, err = followUps(ctx, m, answer)
	return answer, err
}

func followUps(ctx context.Context, m llms.Model, answer string) (string, error) {
	return m.Call(ctx, "Suggest three follow-up questions to: "+answer)
}

// Digest decides nothing itself: the model call is headline's, and is reported there.
func Digest(ctx context.Context, m llms.Model, texts []string) []string {
	var out []string
	for _, t := range texts {
		h, err := headline(ctx, m, t)
		if err == nil {
			out = append(out, h)
		}
	}
	return out
}

func headline(ctx context.Context, m llms.Model, text string) (string, error) {
	return m.Call(ctx, "A headline for: "+text) // want `call to \(llms.Model\).Call has no //once: promise and the provider takes no idempotency key: a retry runs \(and bills\) the model call again; declare a promise on headline \(ONCE001\)$`
}

// Translate and Review both call polish, so polish is nobody's part: it is reported
// where it is, once.
func Translate(ctx context.Context, m llms.Model, text string) (string, error) {
	out, err := m.Call(ctx, "Translate: "+text) // want `declare a promise on Translate \(ONCE001\)$`
	if err != nil {
		return "", err
	}
	return polish(ctx, m, out)
}

func Review(ctx context.Context, m llms.Model, text string) (string, error) {
	out, err := m.Call(ctx, "Review: "+text) // want `declare a promise on Review \(ONCE001\)$`
	if err != nil {
		return "", err
	}
	return polish(ctx, m, out)
}

func polish(ctx context.Context, m llms.Model, text string) (string, error) {
	return m.Call(ctx, "Polish: "+text) // want `declare a promise on polish \(ONCE001\)$`
}
