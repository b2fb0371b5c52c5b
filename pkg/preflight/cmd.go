package preflight

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

var (
	preflightShort = "Before an upgrade: say which volumes are exposed to longhorn#6642 and what to run (read-only)"
	preflightLong  = `Check a cluster before a Longhorn or Harvester upgrade, whose node drains
live-migrate every attached migratable volume (VM disks):

  - the running Longhorn release (setting current-longhorn-version) and whether
    a migration on it can leave two active engines (docs/support-matrix.md);
    with --to, whether the target fixes that, the minor releases on the way,
    and that volumes already stuck stay stuck after the upgrade;
  - every attached, migratable rwx volume, grouped by the node whose drain
    moves it, with its workload (pod, VM) from Longhorn's kubernetesStatus
    and scan's finding when it has one;
  - what blocks a drain today (two active engines, a migration in flight or
    finishing, a cleanup that lasts, orphan engine processes) and the command
    that resolves each;
  - the recommendation, e.g. the upgrade guard 'fix --watch' for the window,
    and the RBAC it needs.

It reads what scan reads and changes nothing. Offline: --bundle reads a
support bundle, -f 'kubectl get ... -o yaml|json' output, as scan does.

Exit status:
  0  nothing blocks the upgrade (an exposed release is not a blocker: run the
     recommended guard)
  1  something blocks a drain and needs attention first
  2  something could not be checked (Longhorn or its release not found, RBAC,
     unreachable, instance managers not readable, bad input); the report is
     still printed when there is one`
	preflightExample = `  # Is this cluster exposed, and what would block the drains?
  kubectl longhorn-engines preflight

  # Before upgrading to v1.6.2: does it fix the bug, and what about stuck volumes?
  kubectl longhorn-engines preflight --to v1.6.2

  # For a script, with the recommended guard sized for an 8-hour window
  kubectl longhorn-engines preflight --for 8h -o json | jq -r .recommendation.guardCommand

  # From a support bundle
  kubectl longhorn-engines preflight --bundle supportbundle_8f1c_2024-05-01T12-00-00Z.zip`
)

// NewCmdPreflight is `preflight`: its flags, help and completion, then
// Complete, Validate and Run.
func NewCmdPreflight(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(cf, streams)
	c := cmdutil.Command(o, &cobra.Command{
		Use:     "preflight [--to VERSION]",
		Short:   preflightShort,
		Long:    preflightLong,
		Example: preflightExample,
		Args:    cmdutil.UsageArgs(cobra.NoArgs),
	})
	f := c.Flags()
	f.StringVar(&o.To, "to", "", "The Longhorn release the upgrade goes to (e.g. v1.6.2): whether it fixes longhorn#6642 and the path to it")
	f.DurationVar(&o.Window, "for", o.Window, "The upgrade window: the --for of the recommended guard")
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, json or yaml")
	f.DurationVar(&o.PendingThreshold, "pending-threshold", o.PendingThreshold, "Count an old engine waiting for its finalizer as a blocker once it has waited this long")
	f.IntVar(&o.ChunkSize, "chunk-size", o.ChunkSize, "Objects per LIST page")
	o.Input.AddFlags(f)
	cmdutil.EnumCompletion(c, "output", OutputFormats)
	return c
}
