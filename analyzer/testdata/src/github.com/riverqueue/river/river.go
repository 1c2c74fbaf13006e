// Package river is a stub of River's worker API.
package river

import "context"

type JobArgs interface{ Kind() string }

type Job[T JobArgs] struct {
	ID   int64
	Args T
}

type WorkerDefaults[T JobArgs] struct{}

type Worker[T JobArgs] interface {
	Work(ctx context.Context, job *Job[T]) error
}

type Workers struct{}

func NewWorkers() *Workers { return &Workers{} }

func AddWorker[T JobArgs](workers *Workers, worker Worker[T]) {}
