package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// newHelpCommand is cobra's help with one difference: an unknown topic is
// a usage error (exit 2), not a help page and exit 0.
func newHelpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help provides help for any command in the application.\nSimply type " + DisplayName + " help [path to command] for full details.",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []cobra.Completion
			cmd, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, sub.Name())
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if cmd == nil || err != nil || len(rest) > 0 {
				return cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("unknown help topic %q (see '%s --help')", strings.Join(args, " "), DisplayName))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}
