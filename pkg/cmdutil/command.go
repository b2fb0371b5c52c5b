package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
)

// Options is a command's Options as kubectl's commands have them: Complete
// fills in what the flags leave out, Validate checks before any request,
// Run does the work.
type Options interface {
	Complete(args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// CompleteValidateRun is every command's RunE: a failure to complete or
// validate is a usage error (exit 2, nothing read or changed), as a bad flag
// is; Run's error carries its own code.
func CompleteValidateRun(ctx context.Context, o Options, args []string) error {
	if err := o.Complete(args); err != nil {
		return WithCode(ExitNoCheck, err)
	}
	if err := o.Validate(); err != nil {
		return WithCode(ExitNoCheck, err)
	}
	return o.Run(ctx)
}

// UsageArgs gives argument-count errors the usage exit code (2), like flag
// errors (see cmd.Execute).
func UsageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		return WithCode(ExitNoCheck, check(c, args))
	}
}

// EnumCompletion offers a flag's fixed values to the shell.
func EnumCompletion(c *cobra.Command, flag string, values []string) {
	_ = c.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// Command is c run as kubectl runs a command's Options: its RunE is
// CompleteValidateRun of o.
func Command(o Options, c *cobra.Command) *cobra.Command {
	c.RunE = func(cmd *cobra.Command, args []string) error {
		return CompleteValidateRun(cmd.Context(), o, args)
	}
	return c
}
