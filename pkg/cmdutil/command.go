package cmdutil

import "github.com/spf13/cobra"

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
