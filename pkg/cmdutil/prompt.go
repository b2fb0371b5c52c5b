package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// IsTerminal tells whether in is an interactive terminal. Commands read
// stdin only then: a pipe or /dev/null never answers a question, and a
// script or a Job must say --yes.
func IsTerminal(in io.Reader) bool {
	_, ok := terminalFd(in)
	return ok
}

// agrees reports whether an answer line is "y" or "yes" (any case).
func agrees(line string) bool {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

// ErrNotTerminal: a question with nobody to answer it. Commands wrap it with
// what was (not) done and how to go on.
var ErrNotTerminal = errors.New("stdin is not a terminal and --yes was not given")

// Prompt is the one way every command asks the operator: y/N on ErrOut,
// only on a terminal, and a signal at the prompt ends the wait.
type Prompt struct {
	In     io.Reader
	ErrOut io.Writer
	// Terminal replaces the terminal test of In (tests stand in for a
	// terminal); nil means IsTerminal.
	Terminal func(io.Reader) bool
	// Target names the cluster the answer applies to (see Target); it is
	// shown before the [y/N].
	Target string
}

// Ask returns ErrNotTerminal unless In is a terminal, else asks question and
// reports whether the answer is y or yes. When ctx ends first it returns an
// error: the read of stdin cannot be interrupted, so it is left behind.
func (p Prompt) Ask(ctx context.Context, question string) (bool, error) {
	term := p.Terminal
	if term == nil {
		term = IsTerminal
	}
	if p.In == nil || !term(p.In) {
		return false, ErrNotTerminal
	}
	// Only the read runs on its own goroutine: every write to ErrOut stays
	// on the caller's, so a stop at the prompt never races the question.
	if p.Target != "" {
		question += " (" + p.Target + ")"
	}
	fmt.Fprintf(p.ErrOut, "%s [y/N]: ", question)
	type read struct {
		line string
		err  error
	}
	answer := make(chan read, 1)
	go func() {
		line, err := bufio.NewReader(p.In).ReadString('\n')
		answer <- read{line, err}
	}()
	select {
	case r := <-answer:
		if r.err != nil && r.line == "" {
			fmt.Fprintln(p.ErrOut) // end of input is a no
			return false, nil
		}
		return agrees(r.line), nil
	case <-ctx.Done():
		fmt.Fprintln(p.ErrOut)
		return false, errors.New("stopped at the prompt")
	}
}

// Confirm is Ask for a command that changes something only on a yes: nil
// on yes, and otherwise an error with code that says nothing was done
// (unchanged, e.g. "nothing was changed"): "aborted: " and unchanged for a
// no, what stopped the prompt and unchanged for a stop, and noTerminal (how
// to go on instead) with no terminal to ask on.
func (p Prompt) Confirm(ctx context.Context, question string, code int, unchanged, noTerminal string) error {
	ok, err := p.Ask(ctx, question)
	switch {
	case errors.Is(err, ErrNotTerminal):
		return WithCode(code, fmt.Errorf("%w: %s", err, noTerminal))
	case err != nil:
		return WithCode(code, fmt.Errorf("%w: %s", err, unchanged))
	case !ok:
		return WithCode(code, errors.New("aborted: "+unchanged))
	}
	return nil
}
