package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

func newCompletionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Print a shell completion script for kubectl-longhorn_engines.

For 'kubectl longhorn-engines <TAB>' (kubectl 1.26 and later), put the
kubectl_complete-longhorn_engines script shipped in the release archive on your PATH.`,
		Example: `  # bash, for the binary itself
  source <(kubectl-longhorn_engines completion bash)`,
		Args:      cmdutil.UsageArgs(cobra.ExactArgs(1)),
		ValidArgs: []cobra.Completion{"bash", "zsh", "fish", "powershell"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, true)
			case "zsh":
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(streams.Out)
			}
			return cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("unsupported shell %q: use bash, zsh, fish or powershell", args[0]))
		},
	}
}
