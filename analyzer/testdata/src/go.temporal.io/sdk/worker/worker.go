// Package worker is a stub of Temporal's worker package: the registration calls.
package worker

type (
	ActivityRegistry interface {
		RegisterActivity(a any)
		RegisterActivityWithOptions(a any, options RegisterOptions)
	}
	Registry interface {
		ActivityRegistry
	}
	Worker interface {
		Registry
		Start() error
	}
	RegisterOptions struct{ Name string }
)

func New(client any, taskQueue string, options any) Worker { return nil }
