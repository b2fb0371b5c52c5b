// Package jobq stands in for github.com/honestbee/jobq, a dependency of
// github.com/longhorn/backupstore that the Go module proxy does not serve.
// It offers the API backupstore uses (a worker dispatcher running timed
// functions) so that longhorn-manager compiles; the controllers the test
// binaries run never list backups, so jobs here simply run one goroutine
// each with their timeout.
package jobq

import (
	"context"
	"time"
)

// Job is a function the dispatcher runs.
type Job func(ctx context.Context) (interface{}, error)

// JobTracker gives a queued job's result.
type JobTracker interface {
	Result() (interface{}, error)
}

// Option configures a WorkerDispatcher; the stand-in ignores them.
type Option func(*WorkerDispatcher)

// WorkerN sets the number of workers (ignored).
func WorkerN(int) Option { return func(*WorkerDispatcher) {} }

// WorkerPoolSize sets the worker pool size (ignored).
func WorkerPoolSize(int) Option { return func(*WorkerDispatcher) {} }

// WorkerDispatcher runs queued jobs.
type WorkerDispatcher struct{}

// NewWorkerDispatcher returns a dispatcher.
func NewWorkerDispatcher(opts ...Option) *WorkerDispatcher {
	d := &WorkerDispatcher{}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Stop stops the dispatcher.
func (d *WorkerDispatcher) Stop() {}

type tracker struct {
	done chan struct{}
	val  interface{}
	err  error
}

func (t *tracker) Result() (interface{}, error) {
	<-t.done
	return t.val, t.err
}

// QueueTimedFunc runs job with a deadline of timeout.
func (d *WorkerDispatcher) QueueTimedFunc(ctx context.Context, job Job, timeout time.Duration) JobTracker {
	t := &tracker{done: make(chan struct{})}
	go func() {
		defer close(t.done)
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		t.val, t.err = job(ctx)
	}()
	return t
}
