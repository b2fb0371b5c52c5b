package scan

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/complete"
)

var (
	scanShort = "Find volumes with more than one active engine and explain each finding (read-only)"
	scanLong  = `Read Longhorn's volumes, engines, replicas and attachment tickets with paginated
LISTs and classify every volume: healthy, migration in flight, confirm/rollback
finishing, pending cleanup, MultipleActiveEngines (longhorn#6642) with the engine
to keep and the stale ones, states where no safe repair exists, inverted replica
flags and orphan engines. Each finding says which engine to keep, which to change,
what 'fix' would do on this Longhorn version, and why.

Offline, with no cluster access: --bundle reads a Longhorn support bundle (the
zip or its extracted folder) and adds evidence from its longhorn-manager logs
(count, first and last time of the "second active engine" errors; -o wide and
JSON); -f reads 'kubectl get ... -o yaml|json' output (repeatable, - for
stdin). The namespace is -n if given, else longhorn-system, else the only one
with Longhorn objects; ages are measured from when the bundle was taken.

Exit status, like 'kubectl diff':
  0  nothing needs action
  1  at least one finding needs action or attention
  2  the cluster, bundle or files could not be checked (Longhorn missing, RBAC,
     unreachable, unknown volume, nothing readable, or input without the
     engines or replicas of its volumes)`
	scanExample = `  # Scan every volume in longhorn-system
  kubectl longhorn-engines scan

  # Two volumes, with every engine's node, flag and state
  kubectl longhorn-engines scan pvc-1234 pvc-5678 -o wide

  # A report for scripts
  kubectl longhorn-engines scan -o json | jq '.findings[] | select(.action != "none")'

  # A support bundle from a user's issue, with log evidence
  kubectl longhorn-engines scan --bundle supportbundle_8f1c_2024-05-01T12-00-00Z.zip -o wide

  # Why draining node-2 hangs: the processes holding its instance-manager budget
  kubectl longhorn-engines scan --node harvester-node-2

  # Objects a user pasted
  kubectl -n longhorn-system get settings.longhorn.io,volumes.longhorn.io,engines.longhorn.io,replicas.longhorn.io,volumeattachments.longhorn.io -o yaml > dump.yaml
  kubectl longhorn-engines scan -f dump.yaml`
)

// NewCmdScan is `scan`: its flags, help and completion, then Complete,
// Validate and Run.
func NewCmdScan(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(cf, streams)
	c := cmdutil.Command(o, &cobra.Command{
		Use:               "scan [VOLUME...]",
		Short:             scanShort,
		Long:              scanLong,
		Example:           scanExample,
		ValidArgsFunction: complete.Volumes(cf),
	})
	f := c.Flags()
	f.StringVarP(&o.Selector, "selector", "l", "", "Label selector on volumes (e.g. -l recurring-job.longhorn.io/source=enabled)")
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json, yaml or name")
	f.BoolVar(&o.NoHeaders, "no-headers", false, "Omit the table header")
	f.IntVar(&o.ChunkSize, "chunk-size", o.ChunkSize, "Objects per LIST page")
	f.StringVar(&o.Node, "node", "", "Show what holds this node's drain: its instance-manager PodDisruptionBudgets and the processes behind them, with their findings")
	o.addFlags(f)
	cmdutil.EnumCompletion(c, "output", OutputFormats)
	cmdutil.EnumCompletion(c, "color", cmdutil.ColorModes)
	return c
}

var (
	describeShort = "Show one volume's engines, replicas, preconditions and the repair that would apply (read-only)"
	describeLong  = `Print, for each named volume, what scan decided and everything it decided
from: the volume's nodes and migration fields, each engine (role, node, active,
state, endpoint, age), each replica (node, engine, which engine's set it is in,
active, data directory), the attachment tickets on Longhorn 1.5+, every
precondition of a repair with the value observed (✓ passed, ✗ failed, with what
failed in words), the decision and why, the exact command that would repair it,
and with --bundle the longhorn-manager log evidence.

It reads what scan reads (the cluster, --bundle or -f) and exits as scan does:
0 nothing needs action, 1 a volume needs action or attention, 2 could not check.`
	describeExample = `  # Why is this volume refused, or what would fix do to it?
  kubectl longhorn-engines describe pvc-7b120d60-1577-4716-be5a-62348271025a

  # The same from a support bundle, with the manager log evidence
  kubectl longhorn-engines describe pvc-7b120d60-1577-4716-be5a-62348271025a --bundle supportbundle.zip`
)

// NewCmdDescribe is `describe`, scan's per-volume view, as kubectl's
// describe is get's: its own Options over the read side scan has
// (ReadOptions). scan VOLUME stays one table row (and -o json) for
// scripts, describe is for a person deciding about one volume.
func NewCmdDescribe(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewDescribeOptions(cf, streams)
	c := cmdutil.Command(o, &cobra.Command{
		Use:               "describe VOLUME...",
		Short:             describeShort,
		Long:              describeLong,
		Example:           describeExample,
		Args:              cmdutil.UsageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: complete.Volumes(cf),
	})
	o.addFlags(c.Flags())
	cmdutil.EnumCompletion(c, "color", cmdutil.ColorModes)
	return c
}
