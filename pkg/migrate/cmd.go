package migrate

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/complete"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
)

// migrateExitCodes ends the help of every writing subcommand: they share
// one table (cmdutil/exit.go).
const migrateExitCodes = `Exit status:
  0  done: the volume is verified where it was asked to be (for status and
     --dry-run: the answer was printed)
  1  stopped, the volume is safe where it started: a pre-check refused, the
     prompt was declined, or the migration failed or was interrupted before the
     confirm and was rolled back and verified
  2  the cluster could not be read (unreachable, forbidden, Longhorn missing,
     unknown volume); nothing was written
  3  needs a person: the confirm left two active engines (longhorn#6642) or
     could not be verified, a rollback could not be written or verified, or
     a write's outcome could not be read back`

var (
	migrateShort   = "Drive a live migration safely: start, wait, confirm or roll back, verify"
	migrateExample = `  # Start a migration and stop once the migration engine on node-b is ready
  kubectl longhorn-engines migrate pvc-1234 --to node-b

  # The whole sequence, without prompting
  kubectl longhorn-engines migrate pvc-1234 --to node-b --confirm --yes

  # Show the write the start would make, checked by the API server
  kubectl longhorn-engines migrate pvc-1234 --to node-b --dry-run=server

  # Finish or abandon a migration in flight (started here or by Longhorn's attachers)
  kubectl longhorn-engines migrate confirm pvc-1234
  kubectl longhorn-engines migrate rollback pvc-1234
  kubectl longhorn-engines migrate status pvc-1234`
)

// NewCmdMigrate is `migrate` and its subcommands confirm, rollback and
// status, each with Options of its own (options.go): flags and help here,
// then Complete, Validate and Run.
func NewCmdMigrate(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(cf, streams)
	c := cmdutil.Command(o, &cobra.Command{
		Use:   "migrate VOLUME --to NODE",
		Short: migrateShort,
		Long: `Live-migrate a migratable RWX Longhorn volume to another node, one checked step at
a time, the way Longhorn's own attachers do:

  Longhorn 1.3/1.4  start: volume spec.migrationNodeID=NODE; confirm: spec.nodeID=NODE
                    with migrationNodeID cleared; rollback: migrationNodeID cleared
  Longhorn 1.5+     start: a csi-attacher ticket for NODE in the volume's
                    volumeattachments.longhorn.io; confirm: remove the old node's
                    ticket; rollback: remove NODE's ticket

Every write is a merge patch pinned to the resourceVersion it was decided on,
sent once: when its answer is lost (a dropped connection, a timeout), the volume
is read back and the run goes on from what the server holds.

Before starting it refuses, and writes nothing, unless: the volume exists, is
migratable and rwx, attached, healthy or degraded, not migrating, has one running
engine and no rebuilding replica, no engine upgrade, restore or expansion pending;
NODE exists in Longhorn, is Ready and schedulable and is not the current node; on
1.5+ the only csi-attacher ticket is the current node's; and no workload uses the
volume. In use means a storage.k8s.io VolumeAttachment of driver.longhorn.io for
its PV, or pods in Longhorn's kubernetesStatus: Kubernetes' attacher owns those
attachments (on 1.5+ the csi-attacher tickets are its VolumeAttachments), so such
volumes should move through Kubernetes (e.g. a VM live migration). If the
storage.k8s.io VolumeAttachments cannot be listed, use is undetermined and the
answer is the same refusal; if that API is not served at all, no Kubernetes
attacher can exist and Longhorn's kubernetesStatus decides. --force accepts the
risk. On 1.5+ Longhorn migrates only volumes with a csi-attacher ticket, which on a
real cluster Kubernetes put there: such a volume is refused unless its Kubernetes
VolumeAttachment is gone or --force is given. Prefer moving volumes in use through
Kubernetes, and use 'migrate status', 'confirm' and 'rollback' to finish or undo
migrations that got stuck.

On Longhorn 1.12, start and confirm refuse without --force: a confirm's
clean-up there can wipe the migrated replicas' data directories (` + docs.ConfirmCleanup + `);
on later releases they have not been shown to keep the data (` + docs.SupportMatrix + `).
Rollback and status work on every release.

It then waits, with progress on stderr, until the migration engine on NODE runs
with an endpoint, as many RW replicas as the old engine, all its replicas running
and in its replica map (one per data directory, else Longhorn restarts it; as
Longhorn, it does not wait for a clone whose node is down or gone), the
same snapshots, and (1.5+) NODE's ticket satisfied. A data directory Longhorn
cloned twice never settles: the migration is rolled back. Without --confirm it stops
there and prints how to confirm or roll back; the volume keeps serving I/O from the
old node. With --confirm it checks readiness again on a fresh read, confirms, and
verifies exactly one engine left, active and running on NODE, every replica
flipped to it, no migration left. Two active engines after the confirm (the
longhorn#6642 state) are reported with the exact 'fix' command; with --fix they
are repaired as 'fix VOLUME' would (objects backed up first) and verified again.

A timeout, a failed step or Ctrl-C/SIGTERM before the confirm rolls the migration
back and verifies the rollback (with a budget of --timeout, at least 2m, of its
own). After the confirm nothing is rolled back: it cannot be undone.

` + migrateExitCodes,
		Example:           migrateExample,
		ValidArgsFunction: complete.Volumes(cf),
		Args:              cobra.ArbitraryArgs,
	})
	f := c.Flags()
	f.StringVar(&o.To, "to", "", "The Longhorn node to migrate the volume to (required)")
	f.BoolVar(&o.Confirm, "confirm", false, "Confirm once the migration engine is ready, then verify (default: stop there)")
	addFixFlags(c, &o.FixOptions)
	addStepFlags(c, &o.StepOptions)
	_ = c.RegisterFlagCompletionFunc("to", complete.MigrationTargets(cf))

	c.AddCommand(
		newCmdConfirm(cf, streams),
		newCmdRollback(cf, streams),
		newCmdStatus(cf, streams),
	)
	return c
}

// addFixFlags: --fix repairs a #6642 state left by the confirm the way
// 'fix VOLUME' would.
func addFixFlags(c *cobra.Command, o *FixOptions) {
	f := c.Flags()
	f.BoolVar(&o.Fix, "fix", false, "If the confirm leaves two active engines (longhorn#6642), repair them as 'fix VOLUME' would, then verify")
	f.StringVar(&o.BackupDir, "backup-dir", "", "With --fix: where the objects are saved before the repair changes them (default: a new longhorn-engines-fix-<time> folder in the working directory)")
	f.BoolVar(&o.Events, "events", o.Events, "With --fix: record Kubernetes Events on the volume for the repair and its verification, as fix does (events.k8s.io; see "+docs.URL("docs/observability.md")+")")
}

// addStepFlags are the flags of every writing subcommand.
func addStepFlags(c *cobra.Command, o *StepOptions) {
	f := c.Flags()
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the migration engine to be ready (and, after a confirm, for the verification)")
	f.BoolVarP(&o.Yes, "yes", "y", false, "Do not prompt for confirmation")
	cmdutil.AddDryRunFlag(c, &o.DryRun, `Must be "none", "server", or "client". client: print the write without sending it; server: send it with dryRun=All so the API server and admission check it, nothing persisted. Nothing is waited for.`)
	cmdutil.AddFieldManagerFlag(c, &o.FieldManager)
	f.BoolVar(&o.Force, "force", false, "Proceed although a workload uses the volume (or that cannot be determined): Kubernetes' attacher also owns its attachment; or although migrations are not proven on this Longhorn release (see "+docs.SupportMatrix+")")
	f.DurationVar(&o.PollInterval, "poll-interval", o.PollInterval, "How often to re-read the volume while waiting")
	_ = f.MarkHidden("poll-interval")
}

var (
	confirmShort = "Finish a live migration in flight on its target node, then verify"
	confirmLong  = `Confirm a live migration in flight, started by 'migrate' or by Longhorn's own
attachers: wait (up to --timeout) until the migration engine on the target node is
ready (see 'migrate --help'), check again on a fresh read, then confirm and verify
exactly one active engine on the target node with every replica flipped to it.

Refuses unless a migration is in flight, the target node is Ready, and no workload
uses the volume (--force accepts that risk). If readiness does not come, nothing is
changed: this command did not start the migration, so it does not roll it back.

` + migrateExitCodes
	confirmExample = `  kubectl longhorn-engines migrate confirm pvc-1234
  kubectl longhorn-engines migrate confirm pvc-1234 --yes --timeout 30m`
	rollbackShort = "Abandon a live migration in flight and verify the volume on its node"
	rollbackLong  = `Roll back a live migration in flight, started by 'migrate' or by Longhorn's own
attachers, and verify the volume back on the node it is attached to: one active
engine there, the migration engine and its replicas gone, no migration left.

Refuses unless a migration is in flight and no workload uses the volume (--force
accepts that risk), and on 1.5+ when no csi-attacher ticket is left on the
source: the workload has left it, Longhorn confirms the migration by itself, and
a rollback would detach the volume. The rollback is written without waiting for
readiness.

When Longhorn detached the volume because the migration failed, rollback removes
the target's csi-attacher ticket and verifies the volume attached on the source:
on 1.7+ name the target with --to; on 1.5 and 1.6 (the migration left without a
node, longhorn#8735) the target is spec.migrationNodeID and --to is not needed.

` + migrateExitCodes
	rollbackExample = `  kubectl longhorn-engines migrate rollback pvc-1234
  kubectl longhorn-engines migrate rollback pvc-1234 --dry-run=server`
)

func newCmdConfirm(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewConfirmOptions(cf, streams)
	c := newCmdVolume(cf, "confirm", confirmShort, confirmLong, confirmExample, o)
	addFixFlags(c, &o.FixOptions)
	addStepTargetFlags(c, &o.StepOptions, "How long to wait for the migration engine to be ready before the confirm, and then for the confirm to be verified")
	return c
}

func newCmdRollback(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewRollbackOptions(cf, streams)
	c := newCmdVolume(cf, "rollback", rollbackShort, rollbackLong, rollbackExample, o)
	addStepTargetFlags(c, &o.StepOptions, "How long to wait for the rollback to be verified (the old engine alone active, the migration engine gone)")
	return c
}

// newCmdVolume is a subcommand on one VOLUME (confirm, rollback, status),
// without its flags.
func newCmdVolume(cf *genericclioptions.ConfigFlags, name, short, long, example string, o cmdutil.Options) *cobra.Command {
	return cmdutil.Command(o, &cobra.Command{
		Use:               name + " VOLUME",
		Short:             short,
		Long:              long,
		Example:           example,
		ValidArgsFunction: complete.Volumes(cf),
		Args:              cobra.ArbitraryArgs,
	})
}

// addStepTargetFlags adds confirm's or rollback's --to and the step flags,
// with timeoutUsage for --timeout: each step waits for something else, so
// the shared usage would be wrong.
func addStepTargetFlags(c *cobra.Command, o *StepOptions, timeoutUsage string) {
	c.Flags().StringVar(&o.To, "to", "", "The migration's target node: required when Longhorn detached the volume after a failed migration (confirm resumes it on this node, rollback on the other); otherwise it must match the migration in flight")
	addStepFlags(c, o)
	if f := c.Flags().Lookup("timeout"); f != nil {
		f.Usage = timeoutUsage
	}
}

var (
	statusShort = "Show where a volume's live migration stands (read-only)"
	statusLong  = `Show where a volume's live migration stands: None, Requested (Longhorn has not
started it), Preparing (with what the migration engine still lacks), Ready (safe to
confirm), Failing (Longhorn will revert it), Finishing (a confirm or rollback
Longhorn is completing) or NeedsAttention (e.g. two active engines); with the
engines, replicas and (1.5+) attachment tickets, and the commands that come next.

Exit status: 0 when the status was printed; 2 when the cluster could not be read.`
	statusExample = `  kubectl longhorn-engines migrate status pvc-1234
  kubectl longhorn-engines migrate status pvc-1234 -o json | jq -r .phase`
)

func newCmdStatus(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewStatusOptions(cf, streams)
	c := newCmdVolume(cf, "status", statusShort, statusLong, statusExample, o)
	c.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format: text, json or yaml")
	cmdutil.EnumCompletion(c, "output", StatusOutputs)
	return c
}
