package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/inventory"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// completeVolumes offers volume names from the cluster, leaving out names
// already on the command line.
func completeVolumes(cf *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, err := inventory.FromFlags(cf)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		vols, err := inventory.ListAll[longhorn.Volume](ctx, c, longhorn.Volumes, cmdutil.Namespace(cf), "", 0)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		used := map[string]bool{}
		for _, a := range args {
			used[a] = true
		}
		var out []cobra.Completion
		for _, v := range vols {
			if !used[v.Name] && strings.HasPrefix(v.Name, toComplete) {
				out = append(out, v.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func registerEnumCompletion(c *cobra.Command, flag string, values []string) {
	_ = c.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}
