package scan

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/complete"
)

// NewCmdDescribe is `describe`, scan's per-volume view, as kubectl's
// describe is get's: it runs scan's Options with Describe set. scan VOLUME
// stays one table row (and -o json) for scripts, describe is for a person
// deciding about one volume.
func NewCmdDescribe(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(cf, streams)
	o.Describe = true
	c := &cobra.Command{
		Use:   "describe VOLUME...",
		Short: "Show one volume's engines, replicas, preconditions and the repair that would apply (read-only)",
		Long: `Print, for each named volume, what scan decided and everything it decided
from: the volume's nodes and migration fields, each engine (role, node, active,
state, endpoint, age), each replica (node, engine, which engine's set it is in,
active, data directory), the attachment tickets on Longhorn 1.5+, every
precondition of a repair with the value observed (✓ passed, ✗ failed, with what
failed in words), the decision and why, the exact command that would repair it,
and with --bundle the longhorn-manager log evidence.

It reads what scan reads (the cluster, --bundle or -f) and exits as scan does:
0 nothing needs action, 1 a volume needs action or attention, 2 could not check.`,
		Example: `  # Why is this volume refused, or what would fix do to it?
  kubectl longhorn-engines describe pvc-7b120d60-1577-4716-be5a-62348271025a

  # The same from a support bundle, with the manager log evidence
  kubectl longhorn-engines describe pvc-7b120d60-1577-4716-be5a-62348271025a --bundle supportbundle.zip`,
		Args:              cmdutil.UsageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: complete.Volumes(cf),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.CompleteValidateRun(cmd.Context(), o, args)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Color, "color", o.Color, "Colour the output: auto, always or never (auto honours NO_COLOR and TERM=dumb)")
	f.DurationVar(&o.PendingThreshold, "pending-threshold", o.PendingThreshold, "Report an active engine waiting for its finalizer once it has waited this long")
	o.Input.AddFlags(f)
	cmdutil.EnumCompletion(c, "color", cmdutil.ColorModes)
	return c
}
