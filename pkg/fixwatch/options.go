package fixwatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// Defaults of --for and --settle.
const (
	DefaultFor    = 6 * time.Hour
	DefaultSettle = 60 * time.Second
)

// Options is `fix --watch`: fix's own options (selection, --yes, --dry-run,
// --strategy, --backup-dir, --wait, --timeout, --parallel, --color) plus
// the window and the settle time.
type Options struct {
	Fix    *fix.Options
	For    time.Duration
	Settle time.Duration
	// MetricsBindAddress serves Prometheus metrics on host:port ("" or
	// "0": off).
	MetricsBindAddress string
	// Hooks are set by tests only.
	Hooks Hooks

	// resolved is what Complete made of fix's flags.
	resolved fix.Settings
	now      func() time.Time
}

// NewOptions returns the defaults around fix's options, whose flags the
// command shares.
func NewOptions(f *fix.Options) *Options {
	return &Options{Fix: f, For: DefaultFor, Settle: DefaultSettle, now: time.Now}
}

// NewWatch is NewOptions with hooks (zero but in tests), as fix.NewCmdFix
// takes it.
func NewWatch(hooks Hooks) func(*fix.Options) fix.Watch {
	return func(f *fix.Options) fix.Watch {
		o := NewOptions(f)
		o.Hooks = hooks
		return o
	}
}

// AddFlags adds the flags only --watch uses.
func (o *Options) AddFlags(f *pflag.FlagSet) {
	f.DurationVar(&o.For, "for", o.For, "With --watch: how long to watch")
	f.DurationVar(&o.Settle, "settle", o.Settle, "With --watch: how long a repairable state must last, unchanged, before it is repaired")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "", `With --watch: serve Prometheus metrics on this address, e.g. ":8080" (off by default; see docs/observability.md)`)
}

// Complete takes the volume names and resolves fix's flags as fix does
// (fix.Options.Resolve).
func (o *Options) Complete(args []string) error {
	o.Fix.Volumes = args
	var err error
	o.resolved, err = o.Fix.Resolve(o.resolved.Client)
	return err
}

// Validate checks the flags before any request; it changes nothing. Volume
// names are optional: without them (or with --all) every volume is watched.
func (o *Options) Validate() error {
	f := o.Fix
	if len(f.Volumes) > 0 && f.All {
		return errors.New("name volumes or pass --all, not both")
	}
	if err := cmdutil.ValidateFieldManager(f.FieldManager); err != nil {
		return err
	}
	switch {
	case o.For <= 0:
		return errors.New("--for must be positive")
	case o.Settle <= 0:
		return errors.New("--settle must be positive: the guard acts only on a state that lasts")
	case f.Timeout <= 0:
		return errors.New("--timeout must be positive")
	case f.Parallel < 1:
		return errors.New("--parallel must be at least 1")
	}
	if err := fix.ValidateBackupTo(f.BackupTo); err != nil {
		return err
	}
	return cmdutil.ValidateColor(f.Color)
}

// Run guards the namespace until ctx ends or --for passes. The error carries
// the exit code: 0 nothing stayed unrepaired, 1 something did (or the run
// was not confirmed), 2 could not watch (RBAC, API, flags), 3 replica flags
// inverted after a repair.
func (o *Options) Run(ctx context.Context) error {
	f := o.Fix
	out, errOut := newStamper(f.Out), newStamper(f.ErrOut)
	prog := progress.New(f.ErrOut, cmdutil.NewPainter(cmdutil.UseColor(f.Color, f.ErrOut)))
	out.clear, errOut.clear = prog.Clear, prog.Clear
	defer out.Flush()
	defer errOut.Flush()

	if o.resolved.DryRun == cmdutil.DryRunNone && !f.Yes {
		q := fmt.Sprintf("Repair volumes in namespace %s automatically, without asking again, for the next %s?", o.resolved.Namespace, o.For)
		p := cmdutil.Prompt{In: f.In, ErrOut: f.ErrOut, Target: cmdutil.Target(f.ConfigFlags)}
		if err := p.Confirm(ctx, q, cmdutil.ExitNeedsAction, "nothing was watched or changed",
			"the guard would change engines with nobody to confirm; re-run with --yes, or with --dry-run=client to only report"); err != nil {
			return err
		}
	}

	ver, src, err := readstate.ReadVersion(ctx, o.resolved.Client, o.resolved.Namespace)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	if !ver.Known() {
		errOut.Printf("warning: Longhorn version unknown (%s): findings are reported, nothing is repaired", src)
	} else if !ver.Affected() {
		errOut.Printf("Longhorn %s has the fix for longhorn#6642: the guard repairs only volumes that got stuck before the upgrade (up to 1.12; see %s)", ver, docs.SupportMatrix)
	}
	if err := preflight(ctx, o.resolved.Client, o.resolved.Namespace, watchedResources(ver), writeVerbs(ver, o.resolved.Strategy, o.resolved.DryRun)); err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	// A typo in a volume name ends here, before the backup folder is made.
	if len(f.Volumes) > 0 {
		var nf *readstate.NotFoundError
		if _, err := readstate.ReadVolumes(ctx, o.resolved.Client, o.resolved.Namespace, f.Volumes); errors.As(err, &nf) {
			return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
		}
	}

	pr := &fix.Printer{Out: out, ErrOut: errOut, Paint: cmdutil.NewPainter(cmdutil.UseColor(f.Color, f.Out)), Reporter: prog}
	set := o.resolved
	set.PollInterval, set.Printer = o.Hooks.pollInterval(), pr
	r, err := fix.NewRepairer(set, fix.Backups{Dir: f.BackupDir, To: f.BackupTo, Now: o.now()})
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("%w: nothing was watched or changed", err))
	}
	defer r.Close()
	backupDir := ""
	if b := r.Backup; b != nil {
		backupDir = b.Dir
		if err := r.ConfigMaps.Probe(ctx); err != nil && !allowed(err) {
			return cmdutil.WithCode(cmdutil.ExitNoCheck, cmdutil.Explain(err, "create", "configmaps", o.resolved.Namespace))
		}
		if err := b.Log.Printf("guard start namespace=%s version=%s strategy=%s for=%s settle=%s volumes=%v", o.resolved.Namespace, ver, o.resolved.Strategy, o.For, o.Settle, f.Volumes); err != nil {
			return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("%w: nothing was watched or changed", err))
		}
		errOut.Printf("Backups and the action log go to %s", r.BackupsGoTo())
	}

	ev := fix.StartEvents(ctx, o.resolved.Client, o.resolved.Namespace, f.Events, o.resolved.DryRun, func(s string) { errOut.Printf("%s", s) })
	defer ev.Close(fix.EventFlushTimeout)
	g := New(Config{
		Client: o.resolved.Client, Namespace: o.resolved.Namespace, Volumes: f.Volumes, For: o.For, Settle: o.Settle,
		Version: ver, Repairer: r, Parallel: f.Parallel, Progress: prog, Events: ev, Hooks: o.Hooks,
	}, out, errOut)
	if o.MetricsBindAddress != "" && o.MetricsBindAddress != "0" {
		srv, err := serveMetrics(o.MetricsBindAddress, g.m)
		if err != nil {
			return cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("%w: nothing was watched or changed", err))
		}
		defer srv.stop()
		errOut.Printf("serving metrics on http://%s/metrics", srv.addr)
		if o.Hooks.MetricsServing != nil {
			o.Hooks.MetricsServing(o.resolved.Namespace, srv.addr)
		}
	}
	rep, err := g.Run(ctx)
	if rep != nil {
		rep.print(errOut, backupDir)
		if r.Backup != nil {
			_ = r.Backup.Log.Printf("guard stop reason=%q repairs=%d unrepaired=%d", rep.Reason, len(rep.Outcomes), len(rep.Unrepaired))
		}
	}
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	switch code := rep.ExitCode(); code {
	case cmdutil.ExitOK:
		return nil
	case cmdutil.ExitAttention:
		return cmdutil.WithCode(code, fmt.Errorf("stopped: replica flags are inverted on volume(s) %s; follow the recovery steps above before running fix again", strings.Join(rep.Inverted, ", ")))
	default:
		return cmdutil.Silent(code)
	}
}
