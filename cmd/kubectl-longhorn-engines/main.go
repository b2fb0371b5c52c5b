// Command kubectl-longhorn_engines is the kubectl plugin
// `kubectl longhorn-engines`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// Set by goreleaser.
var (
	version = ""
	commit  = ""
	date    = ""
	builtBy = ""
)

func main() {
	cmd.Version, cmd.Commit, cmd.Date, cmd.BuiltBy = version, commit, date, builtBy
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := cmd.NewRootCommand(streams)
	err := root.ExecuteContext(ctx)
	code, printIt := cmdutil.CodeOf(err)
	if printIt {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
	}
	return code
}
