package progress

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// ErrTimedOut ends a Poll whose own timeout passed. It is a
// context.DeadlineExceeded, as a deadline of the caller's context is.
var ErrTimedOut = fmt.Errorf("the wait timed out: %w", context.DeadlineExceeded)

// Look is one look at what a Poll waits for.
type Look struct {
	Done    bool   // the wait is over
	Status  string // what is still missing, shown as progress
	Engines string // the volume's engines, shown beside it (Engines)
	Fail    error  // stop waiting now with this error
}

// Poll looks at once, then every interval, until look is done or fails,
// for at most timeout; the last look is at the deadline. Each look's status
// goes to w. A read error (err from look) is shown and retried: the state
// waited for may well come after an API server restart.
//
// It returns the last status shown and nil when done, the look's Fail,
// ErrTimedOut when timeout passed, or the error of ctx when it ended first
// (context.Canceled on Ctrl-C).
func Poll(ctx context.Context, w *Wait, interval, timeout time.Duration, look func(context.Context) (Look, error)) (last string, err error) {
	var failed error
	once := func(ctx context.Context) bool {
		l, err := look(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			// The read was cut short by the end of the wait: nothing to show.
			return false
		case err != nil:
			l = Look{Status: "cannot read the volume: " + err.Error()}
		case l.Fail != nil:
			failed = l.Fail
			return true
		case l.Done:
			return true
		}
		w.Update(l.Status, l.Engines)
		last = l.Status
		return false
	}
	err = wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		return once(ctx), nil
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		// Only the wait's own deadline passed: one last look, as a state
		// reached just then counts.
		switch {
		case once(ctx):
			err = nil
		case ctx.Err() != nil:
			err = ctx.Err()
		default:
			return last, ErrTimedOut
		}
	}
	if err != nil {
		return last, err
	}
	return last, failed
}
