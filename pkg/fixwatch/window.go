package fixwatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

// Window is one run of `fix --watch`, as pkg/fixcmd compiles it from the
// command line: fix's run (the selection, the Repairer's settings, --yes,
// the backups, --parallel, --color, --events; empty or nil Volumes watch
// every volume) guarded for For, repairing what lasts Settle.
type Window struct {
	Fix    fix.Config
	For    time.Duration
	Settle time.Duration
	// MetricsBindAddress serves Prometheus metrics on host:port ("" or
	// "0": off).
	MetricsBindAddress string
	// Hooks are set by tests only.
	Hooks Hooks
}

// Run guards the namespace until ctx ends or --for passes. The error carries
// the exit code: 0 nothing stayed unrepaired, 1 something did (or the run
// was not confirmed), 2 could not watch (RBAC, API, flags), 3 replica flags
// inverted after a repair.
func (o *Window) Run(ctx context.Context) error {
	f := &o.Fix
	out, errOut := newStamper(f.Out), newStamper(f.ErrOut)
	prog := progress.New(f.ErrOut, cmdutil.NewPainter(cmdutil.UseColor(f.Color, f.ErrOut)))
	out.clear, errOut.clear = prog.Clear, prog.Clear
	defer out.Flush()
	defer errOut.Flush()

	if f.Settings.DryRun == cmdutil.DryRunNone && !f.Yes {
		q := fmt.Sprintf("Repair volumes in namespace %s automatically, without asking again, for the next %s?", f.Settings.Namespace, o.For)
		p := cmdutil.Prompt{In: f.In, ErrOut: f.ErrOut, Target: f.Target()}
		if err := p.Confirm(ctx, q, cmdutil.ExitNeedsAction, "nothing was watched or changed",
			"the guard would change engines with nobody to confirm; re-run with --yes, or with --dry-run=client to only report"); err != nil {
			return err
		}
	}

	ver, src, err := readstate.ReadVersion(ctx, f.Settings.Client, f.Settings.Namespace)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	if !ver.Known() {
		errOut.Printf("warning: Longhorn version unknown (%s): findings are reported, nothing is repaired", src)
	} else if !ver.Affected() {
		errOut.Printf("Longhorn %s has the fix for longhorn#6642: the guard repairs only volumes that got stuck before the upgrade (up to 1.12; see %s)", ver, docs.SupportMatrix)
	}
	if err := preflight(ctx, f.Settings.Client, f.Settings.Namespace, watchedResources(ver), writeVerbs(ver, f.Settings.Strategy, f.Settings.DryRun)); err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	// A typo in a volume name ends here, before the backup folder is made.
	if len(f.Volumes) > 0 {
		var nf *readstate.NotFoundError
		if _, err := readstate.ReadVolumes(ctx, f.Settings.Client, f.Settings.Namespace, f.Volumes); errors.As(err, &nf) {
			return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
		}
	}

	pr := &fix.Printer{Out: out, ErrOut: errOut, Paint: cmdutil.NewPainter(cmdutil.UseColor(f.Color, f.Out)), Reporter: prog}
	set, backups := f.Settings, f.Backups
	set.PollInterval, set.Printer = o.Hooks.pollInterval(), pr
	backups.Now = time.Now()
	r, err := fix.NewRepairer(set, backups)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("%w: nothing was watched or changed", err))
	}
	defer r.Close()
	backupDir := ""
	if b := r.Backup; b != nil {
		backupDir = b.Dir
		if err := r.ConfigMaps.Probe(ctx); err != nil && !allowed(err) {
			return cmdutil.WithCode(cmdutil.ExitNoCheck, cmdutil.Explain(err, "create", "configmaps", f.Settings.Namespace))
		}
		if err := b.Log.Printf("guard start namespace=%s version=%s strategy=%s for=%s settle=%s volumes=%v", f.Settings.Namespace, ver, f.Settings.Strategy, o.For, o.Settle, f.Volumes); err != nil {
			return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("%w: nothing was watched or changed", err))
		}
		errOut.Printf("Backups and the action log go to %s", r.BackupsGoTo())
	}

	ev := fix.StartEvents(ctx, f.Settings.Client, f.Settings.Namespace, f.Events, f.Settings.DryRun, func(s string) { errOut.Printf("%s", s) })
	defer ev.Close(fix.EventFlushTimeout)
	g := New(Config{
		Client: f.Settings.Client, Namespace: f.Settings.Namespace, Volumes: f.Volumes, For: o.For, Settle: o.Settle,
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
			o.Hooks.MetricsServing(f.Settings.Namespace, srv.addr)
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
