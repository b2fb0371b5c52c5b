// Command kubectl-longhorn_engines is the kubectl plugin
// `kubectl longhorn-engines`.
package main

import (
	"context"
	"os"

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
	ctx, stop := cmdutil.NotifyContext(context.Background())
	defer stop()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	return cmd.Execute(ctx, streams, os.Args[1:])
}
