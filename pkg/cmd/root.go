// Package cmd is the root of kubectl-longhorn-engines' command tree: it
// gathers each package's command (built beside its Options, as kubectl's
// are), adds version and completion, and runs the tree (Execute). It holds
// no logic of its own.
package cmd

import (
	"flag"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/complete"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fixcmd"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/migrate"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/preflight"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"

	// Auth plugins (OIDC, exec, ...) for kubeconfigs that use them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

// DisplayName is how the user types the plugin.
const DisplayName = "kubectl longhorn-engines"

// NewRootCommand builds the command tree. Every command returns its error;
// main prints it once and chooses the exit code.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return newRootCommand(streams, Hooks{})
}

func newRootCommand(streams genericiooptions.IOStreams, hooks Hooks) *cobra.Command {
	cf := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:   "kubectl-longhorn_engines",
		Short: "Find and safely repair Longhorn volumes with more than one active engine",
		Long: `Find and safely repair Longhorn volumes stuck with more than one active engine
(longhorn/longhorn#6642: "BUG: found the second active engine X besides Y").

  scan      read-only: classify every volume and explain each finding
  describe  read-only: one volume in full, and the repair that would apply
  fix       repair affected volumes, never touching the engine that serves I/O
  migrate   drive a live migration safely
  preflight before an upgrade: which volumes are exposed, what to run

The Longhorn namespace is longhorn-system unless -n is given.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: DisplayName},
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: true,
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)

	flags := root.PersistentFlags()
	cf.AddFlags(flags)
	if f := flags.Lookup("namespace"); f != nil {
		f.Usage = "The Longhorn namespace (longhorn-system when not given; the kubeconfig context's namespace is not used)"
	}
	addKlogVerbosity(flags)
	// -n completes namespaces from the cluster, never file names.
	_ = root.RegisterFlagCompletionFunc("namespace", complete.Namespaces(cf))
	root.SetHelpCommand(newHelpCommand(root))

	root.AddCommand(
		scan.NewCmdScan(cf, streams),
		scan.NewCmdDescribe(cf, streams),
		fixcmd.NewCmdFix(cf, streams, hooks.Fix, hooks.Guard),
		migrate.NewCmdMigrate(cf, streams),
		preflight.NewCmdPreflight(cf, streams),
		newVersionCommand(streams),
		newCompletionCommand(streams),
	)
	return root
}

// addKlogVerbosity exposes only -v of klog's flags: the others are noise for a
// kubectl plugin.
func addKlogVerbosity(flags *pflag.FlagSet) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if v := fs.Lookup("v"); v != nil {
		pf := pflag.PFlagFromGoFlag(v)
		pf.Shorthand = "v"
		flags.AddFlag(pf)
	}
}
