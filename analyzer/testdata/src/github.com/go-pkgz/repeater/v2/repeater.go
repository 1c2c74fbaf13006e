// Package repeater is a stub of go-pkgz/repeater: a call repeated until it succeeds.
package repeater

import (
	"context"
	"time"
)

type Repeater struct{}

func NewFixed(attempts int, delay time.Duration) *Repeater { return &Repeater{} }

func (r *Repeater) Do(ctx context.Context, fun func() error, termErrs ...error) error { return fun() }
