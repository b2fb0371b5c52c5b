// Package fix implements `kubectl longhorn-engines fix`: repair volumes stuck
// with more than one active engine (longhorn/longhorn#6642) without ever
// touching the engine that serves I/O. Its command line is pkg/fixcmd,
// which compiles the flags into a Config; this package knows no flags.
//
// A run plans from one fresh read and detect's classification, prints the
// plan, asks (or needs --yes), then runs for each volume the Repairer
// pipeline: re-read and re-plan, compare with the plan, back up, write with
// uid and resourceVersion preconditions, and wait for Longhorn to finish.
package fix

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// Config is one run of `fix` on named volumes or --all, as pkg/fixcmd
// compiles it from the command line: the Repairer's settings and what the
// run does around them (the prompt, the backups, the workers, the Events).
type Config struct {
	genericiooptions.IOStreams
	// Target names the cluster at the prompt (cmdutil.Target); it is
	// asked only when the run prompts, and must be set.
	Target func() string

	// Settings are the Repairer's: the client, the namespace, the strategy,
	// the dry run, the wait and its timeout, the field manager and the
	// pending threshold (also the plan's). Run adds the printer and the
	// poll interval.
	Settings Settings
	// Volumes are the volumes named; none with --all.
	Volumes []string
	// Yes applies the plan without asking.
	Yes bool
	// Backups say where the objects go before a write; Run sets Now.
	Backups Backups
	// Parallel is how many volumes are repaired at the same time.
	Parallel int
	// Color is --color: auto, always or never.
	Color string
	// Events records Kubernetes Events on the volumes (--events).
	Events bool
	// Hooks are set by tests only.
	Hooks Hooks
}

// Run plans, asks, repairs and reports. The error carries the exit code.
func (o *Config) Run(ctx context.Context) error {
	pr := &Printer{Out: o.Out, ErrOut: o.ErrOut, Paint: cmdutil.NewPainter(cmdutil.UseColor(o.Color, o.Out)),
		Reporter: progress.New(o.ErrOut, cmdutil.NewPainter(cmdutil.UseColor(o.Color, o.ErrOut)))}
	warnf := func(f string, a ...any) { pr.Progress("warning: "+f, a...) }
	plan, err := loadPlan(ctx, o.Settings.Client, o.Settings.Namespace, o.Volumes, o.Settings.Strategy, detect.Options{PendingThreshold: o.Settings.PendingThreshold}, warnf)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	pr.Plan(plan)
	ev := StartEvents(ctx, o.Settings.Client, o.Settings.Namespace, o.Events, o.Settings.DryRun, func(s string) { pr.Progress("%s", s) })
	defer ev.Close(EventFlushTimeout)

	outs := make([]Outcome, len(plan.Volumes))
	var acting []int
	for i, p := range plan.Volumes {
		if p.Acts() {
			acting = append(acting, i)
			continue
		}
		outs[i] = staticOutcome(p)
		o.recordOutcome(ctx, ev, p, outs[i])
		pr.Outcome(outs[i].short())
	}
	if len(acting) == 0 {
		pr.Progress("Nothing to change.")
		pr.Summary(outs, "")
		return exitErr(outs)
	}

	if o.Settings.DryRun == cmdutil.DryRunClient {
		for _, i := range acting {
			outs[i] = clientDryRun(pr, plan.Volumes[i])
		}
		pr.Summary(outs, "")
		return exitErr(outs)
	}
	if o.Settings.DryRun == cmdutil.DryRunNone && !o.Yes {
		p := cmdutil.Prompt{In: o.In, ErrOut: o.ErrOut, Terminal: o.Hooks.Terminal, Target: o.Target()}
		if err := p.Confirm(ctx, fmt.Sprintf("Apply this plan to %d volume(s) in namespace %s?", len(acting), o.Settings.Namespace), cmdutil.ExitNeedsAction,
			"nothing was changed", "nothing was changed; review the plan above, then re-run with --yes (or --dry-run=server to test it)"); err != nil {
			return err
		}
	}
	if o.Hooks.AfterPlan != nil {
		o.Hooks.AfterPlan()
	}
	if ctx.Err() != nil {
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, errors.New("stopped before any change: nothing was changed"))
	}

	set, backups := o.Settings, o.Backups
	set.PollInterval, set.Printer = o.Hooks.PollInterval, pr
	backups.Now = time.Now()
	r, err := NewRepairer(set, backups)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("%w: nothing was changed", err))
	}
	defer r.Close()
	r.beforeWrite, r.afterWrite = o.Hooks.BeforeWrite, o.Hooks.AfterWrite
	backupDir := ""
	if b := r.Backup; b != nil {
		backupDir = b.Dir
		if o.Hooks.BackupStore != nil {
			b.Store = o.Hooks.BackupStore(b.Store)
		}
		if r.ConfigMaps != nil && o.Hooks.ConfigMaps != nil {
			r.ConfigMaps.Client = o.Hooks.ConfigMaps
		}
		pr.Progress("Backups and the action log go to %s", r.BackupsGoTo())
		if err := b.Log.Printf("plan namespace=%s version=%s strategy=%s volumes=%d acting=%d", plan.Namespace, plan.Version, plan.Strategy, len(plan.Volumes), len(acting)); err != nil {
			return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("%w: nothing was changed", err))
		}
		for _, i := range acting {
			p := plan.Volumes[i]
			_ = b.Log.Printf("plan volume=%s action=%s keep=%s stale=%s volumeUID=%s volumeResourceVersion=%s",
				p.Volume, p.Action, p.Keep.Name, refsForLog(p.Stale), p.Snapshot.VolumeUID, p.Snapshot.VolumeResourceVersion)
		}
	}

	pr.Reporter.Total(len(acting))
	o.repairAll(ctx, r, plan, acting, outs, ev)
	pr.Summary(outs, backupDir)
	if r.Stopped() {
		fmt.Fprintln(o.ErrOut, "error: stopped: replica flags are inverted on a volume; follow the recovery steps above before running fix again")
		return cmdutil.Silent(cmdutil.ExitAttention)
	}
	return exitErr(outs)
}

// repairAll runs the pipeline over the acting volumes with --parallel workers.
func (o *Config) repairAll(ctx context.Context, r *Repairer, plan *Plan, acting []int, outs []Outcome, ev *volevents.Recorder) {
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < o.Parallel && w < len(acting); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				outs[i] = r.RepairVolume(ctx, plan.Volumes[i])
				o.recordOutcome(ctx, ev, plan.Volumes[i], outs[i])
				r.Printer.Done(plan.Volumes[i].Volume)
			}
		}()
	}
	for _, i := range acting {
		work <- i
	}
	close(work)
	wg.Wait()
}

// exitErr turns the outcomes into the command's error: nil for exit 0,
// otherwise a silent code (every volume has already said why).
func exitErr(outs []Outcome) error {
	if code := exitCode(outs); code != cmdutil.ExitOK {
		return cmdutil.Silent(code)
	}
	return nil
}
