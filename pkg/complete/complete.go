// Package complete offers shell completions read from the cluster: volume
// names for every command that takes them, and the nodes a volume can
// migrate to. A failed read offers nothing rather than an error.
package complete

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// readTimeout bounds a completion's reads: the shell waits on them.
const readTimeout = 5 * time.Second

// fromCluster is a completion that reads the cluster the flags describe:
// names lists the candidates, within readTimeout; those that start with
// what is typed are offered, never file names. No client or a failed read
// offers nothing.
func fromCluster(cf *genericclioptions.ConfigFlags, names func(ctx context.Context, c *readstate.Client, args []string) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, err := readstate.FromFlags(cf)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		defer cancel()
		ns, err := names(ctx, c, args)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range ns {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// Volumes offers volume names from the cluster, leaving out names already
// on the command line.
func Volumes(cf *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return fromCluster(cf, func(ctx context.Context, c *readstate.Client, args []string) ([]string, error) {
		vols, err := readstate.ListAll[longhorn.Volume](ctx, c, longhorn.Volumes, cmdutil.Namespace(cf), "", 0)
		if err != nil {
			return nil, err
		}
		used := map[string]bool{}
		for _, a := range args {
			used[a] = true
		}
		var out []string
		for _, v := range vols {
			if !used[v.Name] {
				out = append(out, v.Name)
			}
		}
		return out, nil
	})
}

// MigrationTargets offers Longhorn node names for migrate --to, leaving out
// the node the volume (when already given) is attached to.
func MigrationTargets(cf *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return fromCluster(cf, func(ctx context.Context, c *readstate.Client, args []string) ([]string, error) {
		ns := cmdutil.Namespace(cf)
		nodes, err := readstate.ListAll[longhorn.Node](ctx, c, longhorn.Nodes, ns, "", 0)
		if err != nil {
			return nil, err
		}
		current := ""
		if len(args) == 1 {
			if v, err := readstate.Get[longhorn.Volume](ctx, c, longhorn.Volumes, ns, args[0]); err == nil {
				current = v.Status.CurrentNodeID
			}
		}
		var out []string
		for _, n := range nodes {
			if n.Name != current {
				out = append(out, n.Name)
			}
		}
		return out, nil
	})
}

// Namespaces offers the cluster's namespaces for -n.
func Namespaces(cf *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return fromCluster(cf, func(ctx context.Context, c *readstate.Client, _ []string) ([]string, error) {
		if c.Dynamic == nil {
			return nil, nil
		}
		list, err := c.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, ns := range list.Items {
			out = append(out, ns.GetName())
		}
		return out, nil
	})
}
