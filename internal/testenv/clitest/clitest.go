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

// Run executes `kubectl longhorn-engines <args>` with --kubeconfig set, stdin
// empty (not a terminal). It prints errors exactly as main does.
func Run(ctx context.Context, kubeconfig string, args ...string) Result {
	return RunWithInput(ctx, kubeconfig, strings.NewReader(""), args...)
}

// RunLogged is Run that also logs the command line and the result to the
// test, so a failure shows what the user would have seen.
func RunLogged(t testing.TB, ctx context.Context, kubeconfig string, args ...string) Result {
	t.Helper()
	res := Run(ctx, kubeconfig, args...)
	t.Logf("kubectl longhorn-engines %s\n%s", strings.Join(args, " "), res)
	return res
}

// RunWithInput is Run with a given stdin.
func RunWithInput(ctx context.Context, kubeconfig string, in io.Reader, args ...string) Result {
	return RunWithHooks(ctx, kubeconfig, in, cmd.Hooks{}, args...)
}

// RunWithHooks is RunWithInput with test hooks in the commands' Options.
func RunWithHooks(ctx context.Context, kubeconfig string, in io.Reader, hooks cmd.Hooks, args ...string) Result {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: in, Out: &out, ErrOut: &errOut}
	full := append([]string{}, args...)
	if kubeconfig != "" {
		full = append(full, "--kubeconfig", kubeconfig)
	}
	code := cmd.ExecuteWithHooks(ctx, streams, full, hooks)
	return Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}
