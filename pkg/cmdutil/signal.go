package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// SignalError is the cause of a context cancelled by a signal.
type SignalError struct{ Signal os.Signal }

func (e *SignalError) Error() string { return "interrupted by " + SignalName(e.Signal) }

// Code is the exit code for the signal.
func (e *SignalError) Code() int {
	if e.Signal == syscall.SIGTERM {
		return ExitTerminated
	}
	return ExitInterrupted
}

// SignalName is SIGINT or SIGTERM.
func SignalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// NotifyContext returns a context cancelled, with a SignalError as its
// cause, by the first SIGINT or SIGTERM. The commands then stop at their
// next safe point. After the first signal the default handling comes back,
// so a second one ends the process at once.
func NotifyContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(&SignalError{Signal: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// Interrupted returns the signal that cancelled ctx, or nil. A SIGTERM that
// is the command's normal way to end (see SignalEndsNormally) is nil too;
// a Ctrl-C is always an interruption.
func Interrupted(ctx context.Context) *SignalError {
	var se *SignalError
	if !errors.As(context.Cause(ctx), &se) {
		return nil
	}
	if n, _ := ctx.Value(normalEndKey{}).(*atomic.Bool); n != nil && n.Load() && se.Signal == syscall.SIGTERM {
		return nil
	}
	return se
}

type normalEndKey struct{}

// WithSignalEnd makes ctx able to record that a signal is a command's
// normal end; Execute does this for every command.
func WithSignalEnd(ctx context.Context) context.Context {
	return context.WithValue(ctx, normalEndKey{}, new(atomic.Bool))
}

// SignalEndsNormally records that the running command ends on SIGTERM by
// design (the guard: SIGTERM closes its window), so its own exit code
// stands instead of 143. SIGINT still gives 130 and the interrupted line: a
// person pressed Ctrl-C.
func SignalEndsNormally(ctx context.Context) {
	if n, _ := ctx.Value(normalEndKey{}).(*atomic.Bool); n != nil {
		n.Store(true)
	}
}

// InterruptedCode applies a signal to a command's result: the exit code
// becomes ExitInterrupted or ExitTerminated, overriding 0, 1 and 2 but never
// 3 (a person must act first), and the
// one error line says the run was interrupted.
func InterruptedCode(se *SignalError, code int, msg string) (int, string) {
	if se == nil || code == ExitAttention {
		return code, msg
	}
	if msg == "" {
		return se.Code(), fmt.Sprintf("%s: stopped at a safe point; what was done is printed above", se)
	}
	return se.Code(), fmt.Sprintf("%s: %s", se, msg)
}
