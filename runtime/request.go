package once

import (
	"context"
	"fmt"
	"sync"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// requestScope holds the calls made under one request scope.
type requestScope struct {
	mu    sync.Mutex
	calls map[requestKey]*requestCall
}

type requestKey struct{ name, key string }

// requestCall is one call shared by every caller of the same guard and key in a scope.
type requestCall struct {
	done  chan struct{} // closed when the call has returned (or panicked)
	value any
	err   error
}

// WithRequestScope returns a context holding a request scope: the lifetime of a Request
// guard's promise. Put it in the context once per incoming request (in middleware), and
// every Request guard called with that context, or one derived from it, runs its function
// at most once per key.
//
// A context that already holds a scope is returned unchanged, so middleware applied twice
// does not split one request into two scopes. The scope holds the results until the
// context is no longer referenced.
func WithRequestScope(ctx context.Context) context.Context {
	if _, ok := ctx.Value(requestScopeKey).(*requestScope); ok {
		return ctx
	}
	return context.WithValue(ctx, requestScopeKey, &requestScope{calls: make(map[requestKey]*requestCall)})
}

// Request is the shortest promise: once per request, however many callers in that request
// ask. It runs no SQL; it is a memo in the request's context, so two requests run the
// function twice, which is correct for what it is (loading the signed-in user for the page,
// the layout and three handlers) and wrong for anything that spends or sends: use a longer
// promise there.
type Request struct {
	// Name identifies the guard; with the key it names the shared call.
	Name string
}

// Do runs fn once per key in the request scope of ctx. Concurrent and later callers with the
// same key share that one call: they wait for it and get its error. The caller that ran fn
// gets Outcome{Status: Ran}; every other caller gets Duplicate (RequestValue shares fn's
// value too).
//
// A ctx with no request scope is an error (ErrNoRequestScope), not a call without a promise:
// a memo that silently stops deduplicating when the scope is missing is exactly the bug this
// package exists to stop, and it would go unnoticed until the duplicate showed up.
//
// A caller whose own ctx ends while it waits for another caller's fn returns ctx's error; fn
// keeps running for the others. If fn panics, the panic propagates in the caller that ran it
// and the callers sharing the call get an error.
func (g Request) Do(ctx context.Context, key string, fn func(context.Context) error) (Outcome, error) {
	var run func(context.Context) (any, error)
	if fn != nil {
		run = func(ctx context.Context) (any, error) { return nil, fn(ctx) }
	}
	_, out, err := g.do(ctx, key, run)
	return out, err
}

// RequestValue is Request.Do for a function that returns a value: every caller sharing the
// call gets the value the one that ran it returned.
func RequestValue[T any](ctx context.Context, g Request, key string, fn func(context.Context) (T, error)) (T, Outcome, error) {
	var zero T
	var run func(context.Context) (any, error)
	if fn != nil {
		run = func(ctx context.Context) (any, error) { return fn(ctx) }
	}
	v, out, err := g.do(ctx, key, run)
	if v == nil {
		return zero, out, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, Outcome{}, invalid("request", g.Name, "key %q holds a %T, not a %T: two guards share one name", key, v, zero)
	}
	return t, out, err
}

// do runs fn once per key in ctx's request scope, or waits for the call that does.
func (g Request) do(ctx context.Context, key string, fn func(context.Context) (any, error)) (any, Outcome, error) {
	if err := dbcall.NameKey(g.Name, key); err != nil {
		return nil, Outcome{}, err
	}
	if err := checkGuardContext(ctx, "request", g.Name); err != nil {
		return nil, Outcome{}, err
	}
	if fn == nil {
		return nil, Outcome{}, invalid("request", g.Name, "nil function")
	}
	scope, ok := ctx.Value(requestScopeKey).(*requestScope)
	if !ok {
		return nil, Outcome{}, fmt.Errorf("%w: request guard %s (wrap the request's context with once.WithRequestScope)", ErrNoRequestScope, g.Name)
	}

	k := requestKey{g.Name, key}
	scope.mu.Lock()
	call, shared := scope.calls[k]
	if !shared {
		call = &requestCall{done: make(chan struct{})}
		scope.calls[k] = call
	}
	scope.mu.Unlock()

	if !shared {
		g.run(ctx, call, key, fn)
		return call.value, Outcome{Status: Ran}, call.err
	}

	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, Outcome{}, fmt.Errorf("once: request guard %s: waiting for the shared call: %w", g.Name, ctx.Err())
	}
	return call.value, Outcome{Status: Duplicate}, call.err
}

// run calls fn for call and publishes its result. A panic is recorded for the callers
// sharing the call, then re-raised in this one.
func (g Request) run(ctx context.Context, call *requestCall, key string, fn func(context.Context) (any, error)) {
	defer close(call.done)
	returned := false
	defer func() {
		if !returned {
			call.err = fmt.Errorf("once: request guard %s: key %q: the shared call panicked", g.Name, key)
		}
	}()
	v, err := fn(ctx)
	call.value, call.err = v, err
	returned = true
}
