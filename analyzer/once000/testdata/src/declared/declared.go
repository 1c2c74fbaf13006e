// Package declared holds promises written with mistakes.
package declared

import "context"

type Reply struct{ ID int64 }

// SendReply has a misspelled kind.
//
//once:forevr key=reply.ID
func SendReply(ctx context.Context, reply Reply) error { return nil }

// Charge repeats an argument.
//
//once:provider key=reply.ID key=reply.ID
func Charge(ctx context.Context, reply Reply) error { return nil }

// Hold needs a ttl.
//
//once:lease key=reply.ID
func Hold(ctx context.Context, reply Reply) error { return nil }

// Config is not a function.
//
//once:forever key=x
type Config struct{}

func quiet(ctx context.Context) error {
	//oncelint:ignore ONCE001
	return nil
}

func loud(ctx context.Context) error {
	//oncelint:ignore ONCE009 the check does not exist
	return nil
}

// Fetch declares a read with no reason.
//
//oncelint:read
func Fetch(ctx context.Context) error { return nil }

func misplaced(ctx context.Context) error {
	//oncelint:repeat a resend, but not in a doc comment
	return nil
}
