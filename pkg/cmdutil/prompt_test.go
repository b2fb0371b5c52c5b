package cmdutil

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// Every command asks through Prompt: only a terminal is asked, only y or
// yes agree, and a signal at the prompt ends the wait.
func TestPromptAsk(t *testing.T) {
	terminal := func(io.Reader) bool { return true }
	for _, tc := range []struct {
		in       string
		terminal func(io.Reader) bool
		want     bool
		err      error
	}{
		{"y\n", nil, false, ErrNotTerminal}, // a pipe never answers
		{"y\n", terminal, true, nil},
		{"YES\n", terminal, true, nil},
		{"yess\n", terminal, false, nil},
		{"", terminal, false, nil},
	} {
		var errOut strings.Builder
		got, err := Prompt{In: strings.NewReader(tc.in), ErrOut: &errOut, Terminal: tc.terminal}.Ask(context.Background(), "Go?")
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("answer %q (terminal %t): %t, %v; want %t, %v", tc.in, tc.terminal != nil, got, err, tc.want, tc.err)
		}
		if asked := strings.Contains(errOut.String(), "Go? [y/N]"); asked != (tc.terminal != nil) {
			t.Errorf("answer %q: asked %t", tc.in, asked)
		}
	}

	// A signal at the prompt: stdin blocks, the context ends the wait.
	r, w := io.Pipe()
	defer func() { _ = w.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errOut strings.Builder
	if ok, err := (Prompt{In: r, ErrOut: &errOut, Terminal: terminal}).Ask(ctx, "Go?"); ok || err == nil {
		t.Errorf("cancelled at the prompt: %t, %v; want false and an error", ok, err)
	}
}
