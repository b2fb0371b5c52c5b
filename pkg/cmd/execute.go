package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// Execute runs the command tree with args and returns the exit code. Errors
// are printed once, as one "error: ..." line on stderr; a command that has
// already reported (scan's findings) returns a silent code.
func Execute(ctx context.Context, streams genericiooptions.IOStreams, args []string) int {
	return ExecuteWithHooks(ctx, streams, args, Hooks{})
}

// ExecuteWithHooks is Execute with test hooks in the commands' Options.
func ExecuteWithHooks(ctx context.Context, streams genericiooptions.IOStreams, args []string, hooks Hooks) int {
	root := newRootCommand(streams, hooks)
	root.SetArgs(args)
	// A mistyped flag or command checked nothing: exit 2, never scan's 1
	// ("findings"), so scripts cannot mistake a typo for a result.
	// kubectl adds where to read the usage; here on the same line.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
	})
	ctx = cmdutil.WithSignalEnd(ctx)
	err := root.ExecuteContext(ctx)
	if err != nil && strings.HasPrefix(err.Error(), "unknown command ") {
		err = cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	code, printIt := cmdutil.CodeOf(err)
	msg := ""
	if printIt {
		msg = safetext.Escape(oneLine(err.Error()))
	}
	if se := cmdutil.Interrupted(ctx); se != nil {
		if c, m := cmdutil.InterruptedCode(se, code, msg); c != code {
			code, msg, printIt = c, m, true
		}
	}
	if printIt {
		fmt.Fprintf(streams.ErrOut, "error: %s\n", msg)
	}
	return code
}

// oneLine keeps an error on one line: cobra puts its suggestions for a
// mistyped command on lines of their own.
func oneLine(msg string) string {
	if head, names, ok := strings.Cut(msg, "\n\nDid you mean this?\n"); ok {
		msg = head + " (did you mean " + strings.Join(strings.Fields(names), " or ") + "?)"
	}
	return safetext.OneLine(msg)
}
