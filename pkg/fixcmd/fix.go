// Package fixcmd is `kubectl longhorn-engines fix` and `fix --watch` on
// the command line: one cobra command, its help and flags, and one Options
// whose Complete compiles the flags into the one-shot repair's config
// (fix.Config) or, with --watch, the upgrade guard's (fixwatch.Window).
// Those two packages run them and know nothing of cobra or of each other's
// flags.
package fixcmd

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/complete"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fixwatch"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

var (
	fixShort = "Repair volumes with more than one active engine, never touching the engine that serves I/O"
	fixLong  = `Repair Longhorn volumes stuck with more than one active engine (longhorn#6642).

fix plans from a fresh scan and prints, for each selected volume, the engine to
keep (the one on status.currentNodeID), the engines to change, the action and
why. It then asks y/N on a terminal; without a terminal it changes nothing
unless --yes is given.

The action follows the Longhorn version (docs/troubleshooting-two-active-engines.md):
` + detect.RepairTableText() + `
--strategy=deactivate is allowed on every affected version, --strategy=delete
on 1.5.0/1.5.1 only. No strategy overrides a failed precondition.

On Longhorn 1.5.3 fix also clears a stale status.currentMigrationNodeID
(StaleMigrationNodeID) on a detached volume that nothing asks for: one patch
of the volume's status, through the same steps (see
docs/troubleshooting-migration-family.md). On 1.4.3 and 1.5.3 it deletes the
inactive engine of a volume whose confirm Longhorn cannot finish because two
engines sit on one node (EnginesOnOneNode), keeping the active one. The rest
of that family is reported with the steps to take by hand.

Right before acting on a volume, fix re-reads it and plans again; any change
since the plan (volume, engines, replicas, their resourceVersions, the version)
skips that volume. Each write carries the engine's uid and resourceVersion, so
a concurrent change makes the server refuse it. Before the first write the
volume, its engines and replicas are saved as YAML (one document per object,
for kubectl create -f or apply -f) in --backup-dir with an action log. After
acting, fix waits until Longhorn has finished: one engine, on the current node,
every replica active on it. If the replica flags end up inverted, fix stops
all further changes and prints recovery steps.

With --watch, fix is an upgrade guard: it watches volumes, engines, replicas
(and, on 1.5+, volume attachments) for --for, every volume or only the named
ones, and repairs a volume as fix does once it has stayed, unchanged (same
engines and replicas), for --settle with two active engines or with replicas
left active for a deleted engine; a migration that is still confirming or
cleaning up is never touched. Each repair runs the whole pipeline above.
Every event is one line with an RFC 3339 time (events and repairs on stdout,
progress and the summary on stderr). It survives watch expiry and API server
restarts, stops on SIGTERM or Ctrl-C or after --for with a summary, and needs
--yes unless stdin is a terminal (then it asks once, at start). It needs
watch, and patch or delete on engines: see deploy/README.md.

Exit status:
  0  every selected volume is healthy at the end (repaired, nothing to do, or
     Longhorn is still finishing a migration); for --dry-run, the plan can run
  1  some volume is not repaired: refused, skipped, failed, timed out,
     superseded (the volume moved on to a new migration before the change
     could be verified: scan it again), or the plan was declined or not
     confirmed (no terminal and no --yes)
  2  the cluster could not be read: Longhorn missing, RBAC, unreachable,
     unknown volume, invalid flags
  3  replica flags are inverted after a change: stopped, recover by hand
With --watch: 0 nothing needs attention at the end; 1 some volume does (not
repaired yet, a repair that did not end well, a state fix does not repair);
2 the guard could not watch (RBAC, API, flags); 3 as above.`
	fixExample = `  # Show what would be done to one volume, change nothing
  kubectl longhorn-engines fix pvc-1234 --dry-run=client

  # Let the API server validate the writes without persisting them
  kubectl longhorn-engines fix pvc-1234 --dry-run=server

  # Repair every affected volume without a prompt, backups in ./backup
  kubectl longhorn-engines fix --all --yes --backup-dir ./backup

  # Restore a volume's objects from a backup
  kubectl apply -f ./backup/pvc-1234.yaml

  # Guard a 6-hour upgrade window; repair what stays broken for a minute
  kubectl longhorn-engines fix --watch --yes --for 6h --settle 60s --backup-dir ./backup

  # Only report what the guard would do
  kubectl longhorn-engines fix --watch --dry-run=client`
)

// NewCmdFix is `fix` and `fix --watch`: flags, help and completion, then
// Complete, Validate and Run of one Options. fixHooks and guardHooks are
// zero but in tests.
func NewCmdFix(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, fixHooks fix.Hooks, guardHooks fixwatch.Hooks) *cobra.Command {
	o := NewOptions(cf, streams)
	o.FixHooks, o.GuardHooks = fixHooks, guardHooks
	c := &cobra.Command{
		Use:               "fix (VOLUME... | --all | --watch [VOLUME...])",
		Short:             fixShort,
		Long:              fixLong,
		Example:           fixExample,
		ValidArgsFunction: complete.Volumes(cf),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkModeFlags(cmd.Flags()); err != nil {
				return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
			}
			if o.Watch {
				// SIGTERM is how the guard's window ends: its verdict
				// (0-3, deploy/README.md) is the exit code. Ctrl-C is 130.
				cmdutil.SignalEndsNormally(cmd.Context())
			}
			return cmdutil.CompleteValidateRun(cmd.Context(), o, args)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.All, "all", false, "Select every volume in the namespace (only affected ones are changed)")
	f.BoolVarP(&o.Yes, "yes", "y", false, "Apply the plan without asking")
	cmdutil.AddDryRunFlag(c, &o.DryRun, `"none" changes the cluster; "client" prints the plan and the changes only; "server" sends the writes with dryRun so the server validates them without persisting`)
	f.StringVar(&o.Strategy, "strategy", o.Strategy, "auto (deactivate on 1.3/1.4, delete on 1.5.0/1.5.1), deactivate, or delete (1.5.0/1.5.1 only)")
	f.StringVar(&o.BackupDir, "backup-dir", "", "Folder for the YAML backups and actions.log (default: a new longhorn-engines-fix-<time> folder in the working directory)")
	f.StringVar(&o.BackupTo, "backup-to", o.BackupTo, `"dir": backups and actions.log in --backup-dir only; "configmap": also, before each repair's write, one ConfigMap per repaired volume in the Longhorn namespace with its objects' YAML and the action log (needs create on configmaps; see docs/backups.md)`)
	f.BoolVar(&o.Wait, "wait", o.Wait, "Wait until Longhorn has finished and the volume verifies")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for each volume to verify")
	f.IntVar(&o.Parallel, "parallel", o.Parallel, "Volumes repaired at the same time")
	f.StringVar(&o.Color, "color", o.Color, "Colour the output: auto, always or never")
	f.BoolVar(&o.Events, "events", o.Events, "Record a Kubernetes Event on each volume repaired, refused, skipped or verified (events.k8s.io; never in a dry run; see docs/observability.md)")
	cmdutil.AddFieldManagerFlag(c, &o.FieldManager)
	f.DurationVar(&o.PendingThreshold, "pending-threshold", o.PendingThreshold, "Count an active engine waiting for its finalizer as a clean-up that lasts once it has waited this long, as scan does")
	f.BoolVarP(&o.Watch, "watch", "w", false, "Guard the namespace: watch for --for and repair volumes that stay repairable for --settle")
	f.DurationVar(&o.For, "for", o.For, "With --watch: how long to watch")
	f.DurationVar(&o.Settle, "settle", o.Settle, "With --watch: how long a repairable state must last, unchanged, before it is repaired")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "", `With --watch: serve Prometheus metrics on this address, e.g. ":8080" (off by default; see docs/observability.md)`)
	cmdutil.EnumCompletion(c, "strategy", fix.Strategies)
	cmdutil.EnumCompletion(c, "backup-to", fix.BackupTargets)
	cmdutil.EnumCompletion(c, "color", cmdutil.ColorModes)
	return c
}

// Options is everything `fix` and `fix --watch` need, filled by flags and
// Complete, checked by Validate.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	Volumes   []string
	All       bool
	Yes       bool
	DryRun    string
	Strategy  string
	BackupDir string
	BackupTo  string
	Wait      bool
	Timeout   time.Duration
	Parallel  int
	Color     string
	// Events records Kubernetes Events on the volumes (--events).
	Events bool
	// FieldManager names fix in managedFields (--field-manager).
	FieldManager string
	// PendingThreshold is how long a clean-up may wait before it counts as
	// lasting (--pending-threshold), as scan and preflight count it.
	PendingThreshold time.Duration

	// Watch runs the upgrade guard (--watch) for For, repairing a state
	// that lasts Settle, unchanged.
	Watch       bool
	For, Settle time.Duration
	// MetricsBindAddress serves the guard's Prometheus metrics on
	// host:port ("" or "0": off).
	MetricsBindAddress string

	// FixHooks and GuardHooks are set by tests only.
	FixHooks   fix.Hooks
	GuardHooks fixwatch.Hooks

	// config is what Complete compiled of the flags.
	config fix.Config
}

// NewOptions returns the defaults.
func NewOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *Options {
	return &Options{
		ConfigFlags:      cf,
		IOStreams:        streams,
		DryRun:           string(cmdutil.DryRunNone),
		Strategy:         string(fix.StrategyAuto),
		BackupTo:         fix.BackupToDir,
		Wait:             true,
		Timeout:          5 * time.Minute,
		Parallel:         1,
		Color:            "auto",
		Events:           true,
		FieldManager:     cmdutil.DefaultFieldManager,
		PendingThreshold: detect.DefaultPendingThreshold,
		For:              fixwatch.DefaultFor,
		Settle:           fixwatch.DefaultSettle,
	}
}

// checkModeFlags refuses, before anything else, a flag of the other mode
// given on the command line.
func (o *Options) checkModeFlags(f *pflag.FlagSet) error {
	if o.Watch {
		if f.Changed("pending-threshold") {
			return errors.New("--pending-threshold is not used with --watch: the guard acts only on what lasts --settle")
		}
		return nil
	}
	if f.Changed("for") || f.Changed("settle") {
		return errors.New("--for and --settle need --watch")
	}
	if f.Changed("metrics-bind-address") {
		return errors.New("--metrics-bind-address needs --watch")
	}
	return nil
}

// Complete takes the volume names and compiles the flags into fix's run:
// --strategy and --dry-run parsed, the namespace and the client resolved.
func (o *Options) Complete(args []string) error {
	o.Volumes = args
	s, err := fix.ParseStrategy(o.Strategy)
	if err != nil {
		return err
	}
	d, err := cmdutil.DryRunFlag(o.DryRun, o.ErrOut)
	if err != nil {
		return err
	}
	c, err := readstate.Ensure(nil, o.ConfigFlags)
	if err != nil {
		return err
	}
	cf := o.ConfigFlags
	o.config = fix.Config{
		IOStreams: o.IOStreams,
		Target:    func() string { return cmdutil.Target(cf) },
		Settings: fix.Settings{
			Client: c, Namespace: cmdutil.Namespace(cf), Strategy: s, DryRun: d,
			Wait: o.Wait, Timeout: o.Timeout, FieldManager: o.FieldManager, PendingThreshold: o.PendingThreshold,
		},
		Volumes: o.Volumes, Yes: o.Yes, Backups: fix.Backups{Dir: o.BackupDir, To: o.BackupTo},
		Parallel: o.Parallel, Color: o.Color, Events: o.Events, Hooks: o.FixHooks,
	}
	return nil
}

// Validate checks the selection and flag values before any request; it
// changes nothing. With --watch volume names are optional: without them
// (or with --all) every volume is watched.
func (o *Options) Validate() error {
	if o.Watch {
		return o.validateWatch()
	}
	switch {
	case len(o.Volumes) == 0 && !o.All:
		return errors.New("no volume selected: name the volumes to repair (kubectl longhorn-engines fix VOLUME...) or pass --all; 'kubectl longhorn-engines scan' lists the affected ones")
	case len(o.Volumes) > 0 && o.All:
		return errBoth
	}
	if err := o.validateRepair(); err != nil {
		return err
	}
	if o.PendingThreshold <= 0 {
		return errors.New("--pending-threshold must be positive")
	}
	if err := fix.ValidateBackupTo(o.BackupTo); err != nil {
		return err
	}
	if err := cmdutil.ValidateFieldManager(o.FieldManager); err != nil {
		return err
	}
	return cmdutil.ValidateColor(o.Color)
}

var errBoth = errors.New("name volumes or pass --all, not both")

func (o *Options) validateWatch() error {
	if len(o.Volumes) > 0 && o.All {
		return errBoth
	}
	if err := cmdutil.ValidateFieldManager(o.FieldManager); err != nil {
		return err
	}
	switch {
	case o.For <= 0:
		return errors.New("--for must be positive")
	case o.Settle <= 0:
		return errors.New("--settle must be positive: the guard acts only on a state that lasts")
	}
	if err := o.validateRepair(); err != nil {
		return err
	}
	if err := fix.ValidateBackupTo(o.BackupTo); err != nil {
		return err
	}
	return cmdutil.ValidateColor(o.Color)
}

// validateRepair checks what every repair uses, one-shot or guarded.
func (o *Options) validateRepair() error {
	if o.Timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	if o.Parallel < 1 {
		return errors.New("--parallel must be at least 1")
	}
	return nil
}

// Run runs what Complete compiled: fix's run or, with --watch, the guard
// around it. The error carries the exit code.
func (o *Options) Run(ctx context.Context) error {
	if o.Watch {
		w := fixwatch.Window{Fix: o.config, For: o.For, Settle: o.Settle, MetricsBindAddress: o.MetricsBindAddress, Hooks: o.GuardHooks}
		return w.Run(ctx)
	}
	return o.config.Run(ctx)
}
