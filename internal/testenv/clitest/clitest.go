// Package clitest runs the plugin's real command tree in-process, the way
// main does, and captures what a user would see: stdout, stderr and the exit
// code. Tests drive every command through it against the test cluster.
//
// It is the one part of internal/testenv in a package of its own: it imports
// pkg/cmd and so every command package, whose in-package tests use testenv.
package clitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
)

// Result is one command run.
type Result struct {
	Stdout string
	Stderr string
	Code   int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
}

// Runner runs `kubectl longhorn-engines ARGS --kubeconfig KUBECONFIG`
// through the real command tree, by default with stdin empty (not a
// terminal), no test hooks and no time bound but the caller's context. Each
// option returns a new Runner, so one Runner can be the base of several:
//
//	clitest.New(t, kubeconfig).Input(r).Hooks(h).Run(ctx, "fix", "vol")
//
// It prints errors exactly as main does, and logs every command line with
// its result to t, which is what a failing test needs to show.
type Runner struct {
	t          testing.TB
	kubeconfig string
	in         io.Reader
	hooks      cmd.Hooks
	timeout    time.Duration
}

// New is a Runner against kubeconfig ("": none, as for offline commands or
// a command line that names its own) logging to t. With t nil nothing is
// logged: the explorer runs the plugin outside any test.
func New(t testing.TB, kubeconfig string) Runner {
	return Runner{t: t, kubeconfig: kubeconfig}
}

// Input is r with stdin read from in.
func (r Runner) Input(in io.Reader) Runner {
	r.in = in
	return r
}

// Hooks is r with the test hooks h in the commands' Options.
func (r Runner) Hooks(h cmd.Hooks) Runner {
	r.hooks = h
	return r
}

// Timeout is r with each run's context bounded to d.
func (r Runner) Timeout(d time.Duration) Runner {
	r.timeout = d
	return r
}

// Run runs the command line args to its end and returns what it printed and
// its exit code.
func (r Runner) Run(ctx context.Context, args ...string) Result {
	if r.t != nil {
		r.t.Helper()
	}
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	in := r.in
	if in == nil {
		in = strings.NewReader("")
	}
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: in, Out: &out, ErrOut: &errOut}
	full := append([]string{}, args...)
	if r.kubeconfig != "" {
		full = append(full, "--kubeconfig", r.kubeconfig)
	}
	start := time.Now()
	code := cmd.ExecuteWithHooks(ctx, streams, full, r.hooks)
	res := Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
	if r.t != nil {
		r.t.Logf("kubectl longhorn-engines %s (%s)\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), res)
	}
	return res
}
