// Package cmdutil holds what every command shares: exit codes, error
// wording for API failures, colour and the client set-up.
package cmdutil

import (
	"errors"
	"fmt"
)

// The exit codes of every command, in one table (docs/exit-codes.md says
// what each means per command). scan follows `kubectl diff`: 0 nothing to
// do, 1 findings, 2 could not check. A signal gives 128 + its number.
const (
	ExitOK = 0
	// ExitNeedsAction: scan and preflight found something that needs doing;
	// fix left a volume not repaired, migrate stopped with the volume where
	// it started. Nothing is in a state a person must repair.
	ExitNeedsAction = 1
	// ExitNoCheck: the cluster or the input could not be read, or a flag is
	// invalid; nothing was changed.
	ExitNoCheck = 2
	// ExitAttention: a person must act before anything else (fix: replica
	// flags inverted after a change; migrate: a confirm or rollback that could
	// not be verified, or a confirm that left two active engines). A signal
	// never hides it.
	ExitAttention   = 3
	ExitInterrupted = 130 // SIGINT
	ExitTerminated  = 143 // SIGTERM
)

// ExitError carries an exit code up to main. A nil Err means the command
// already said everything it had to and only the code remains.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// WithCode wraps err so main exits with code; nil stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: code, Err: err}
}

// Silent is an exit code with nothing more to print.
func Silent(code int) error { return &ExitError{Code: code} }

// CodeOf returns the exit code for err (0 for nil, 1 when unspecified) and
// whether an "error: ..." line should be printed.
func CodeOf(err error) (code int, printIt bool) {
	if err == nil {
		return 0, false
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code, ee.Err != nil
	}
	return ExitNeedsAction, true
}
