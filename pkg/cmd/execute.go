package cmd

import (
	"context"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// Execute runs the command tree with args and returns the exit code. Errors
// are printed once, as one "error: ..." line on stderr; a command that has
// already reported (scan's findings) returns a silent code.
func Execute(ctx context.Context, streams genericiooptions.IOStreams, args []string) int {
	root := NewRootCommand(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code, printIt := cmdutil.CodeOf(err)
	if printIt {
		fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
	}
	return code
}
