// Package welcome greets new users.
package welcome

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	once "github.com/oncekit/once/runtime"
)

type User struct {
	ID    int64
	Email string
}

type Sender struct {
	ses *sesv2.Client
	db  once.DB
}

// SendWelcome emails the welcome message once per user.
//
//once:forever key=u.ID
func (s *Sender) SendWelcome(ctx context.Context, u User) error {
	_, err := s.ses.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String("hi@example.com")})
	return err
}

// Resend is an operator's button: it forgets nothing, and bypasses the promise.
func (s *Sender) Resend(ctx context.Context, u User) error {
	err := s.SendWelcome(ctx, u) // want `call to SendWelcome bypasses its //once:forever promise: a retry runs it again; call the generated SendWelcomeOnce instead`
	return err
}

// ResendAll is rewritten inside its if statement.
func (s *Sender) ResendAll(ctx context.Context, users []User) error {
	for _, u := range users {
		if err := s.SendWelcome(ctx, u); err != nil { // want `call to SendWelcome bypasses`
			return err
		}
	}
	return nil
}

// Again returns the call's error directly: reported, no mechanical fix.
func (s *Sender) Again(ctx context.Context, u User) error {
	return s.SendWelcome(ctx, u) // want `call to SendWelcome bypasses`
}

// Invite has no generated wrapper yet.
//
//once:forever key=u.ID
func Invite(ctx context.Context, u User) error { return nil }

func inviteAll(ctx context.Context, users []User) {
	for _, u := range users {
		Invite(ctx, u) // want `call to Invite bypasses its //once:forever promise, and InviteOnce is not generated yet: run go generate, then call InviteOnce`
	}
}
