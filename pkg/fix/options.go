// Package fix implements `kubectl longhorn-engines fix`: repair volumes stuck
// with more than one active engine (longhorn/longhorn#6642) without ever
// touching the engine that serves I/O.
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

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// Options is everything `fix` needs, filled by flags and Complete, checked
// by Validate.
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
	// Hooks are set by tests only.
	Hooks Hooks

	// resolved is what Complete made of the flags.
	resolved Settings
	now      func() time.Time
}

// NewOptions returns the defaults.
func NewOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *Options {
	return &Options{
		ConfigFlags:      cf,
		IOStreams:        streams,
		DryRun:           string(cmdutil.DryRunNone),
		Strategy:         string(StrategyAuto),
		BackupTo:         BackupToDir,
		Wait:             true,
		Timeout:          5 * time.Minute,
		Parallel:         1,
		Color:            "auto",
		Events:           true,
		FieldManager:     cmdutil.DefaultFieldManager,
		PendingThreshold: detect.DefaultPendingThreshold,
		now:              time.Now,
	}
}

// Complete takes the volume names and resolves the flags (Resolve).
func (o *Options) Complete(args []string) error {
	o.Volumes = args
	var err error
	o.resolved, err = o.Resolve(o.resolved.Client)
	return err
}

// Resolve makes of fix's flags the Settings of a Repairer, for fix and fix
// --watch alike: --strategy and --dry-run parsed, the namespace, the client
// (c when a test gave one), --wait, --timeout and --field-manager. The
// caller adds the printer and what is its own.
func (o *Options) Resolve(c *readstate.Client) (Settings, error) {
	s, err := ParseStrategy(o.Strategy)
	if err != nil {
		return Settings{}, err
	}
	d, err := cmdutil.DryRunFlag(o.DryRun, o.ErrOut)
	if err != nil {
		return Settings{}, err
	}
	c, err = readstate.Ensure(c, o.ConfigFlags)
	if err != nil {
		return Settings{}, err
	}
	return Settings{
		Client: c, Namespace: cmdutil.Namespace(o.ConfigFlags), Strategy: s, DryRun: d,
		Wait: o.Wait, Timeout: o.Timeout, FieldManager: o.FieldManager,
	}, nil
}

// Validate checks the selection and flag values before any request; it
// changes nothing.
func (o *Options) Validate() error {
	switch {
	case len(o.Volumes) == 0 && !o.All:
		return errors.New("no volume selected: name the volumes to repair (kubectl longhorn-engines fix VOLUME...) or pass --all; 'kubectl longhorn-engines scan' lists the affected ones")
	case len(o.Volumes) > 0 && o.All:
		return errors.New("name volumes or pass --all, not both")
	}
	if o.Timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	if o.Parallel < 1 {
		return errors.New("--parallel must be at least 1")
	}
	if o.PendingThreshold <= 0 {
		return errors.New("--pending-threshold must be positive")
	}
	if err := ValidateBackupTo(o.BackupTo); err != nil {
		return err
	}
	if err := cmdutil.ValidateFieldManager(o.FieldManager); err != nil {
		return err
	}
	return cmdutil.ValidateColor(o.Color)
}

// Run plans, asks, repairs and reports. The error carries the exit code.
func (o *Options) Run(ctx context.Context) error {
	pr := &Printer{Out: o.Out, ErrOut: o.ErrOut, Paint: cmdutil.NewPainter(cmdutil.UseColor(o.Color, o.Out)),
		Reporter: progress.New(o.ErrOut, cmdutil.NewPainter(cmdutil.UseColor(o.Color, o.ErrOut)))}
	warnf := func(f string, a ...any) { pr.Progress("warning: "+f, a...) }
	plan, err := loadPlan(ctx, o.resolved.Client, o.resolved.Namespace, o.Volumes, o.resolved.Strategy, detect.Options{PendingThreshold: o.PendingThreshold}, warnf)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	pr.Plan(plan)
	ev := StartEvents(ctx, o.resolved.Client, o.resolved.Namespace, o.Events, o.resolved.DryRun, func(s string) { pr.Progress("%s", s) })
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

	if o.resolved.DryRun == cmdutil.DryRunClient {
		for _, i := range acting {
			p := plan.Volumes[i]
			ws := p.Writes()
			for _, w := range ws {
				pr.Changed(w.Resource, w.Name, w.Verb, cmdutil.DryRunClient)
			}
			outs[i] = Outcome{Volume: p.Volume, Result: ResultDryRun, Detail: "client dry run, nothing sent: would write " + writesPhrase(ws) + keepPhrase(p), Changed: writeNames(ws)}
		}
		pr.Summary(outs, "")
		return exitErr(outs)
	}
	if o.resolved.DryRun == cmdutil.DryRunNone && !o.Yes {
		p := cmdutil.Prompt{In: o.In, ErrOut: o.ErrOut, Terminal: o.Hooks.Terminal, Target: cmdutil.Target(o.ConfigFlags)}
		if err := p.Confirm(ctx, fmt.Sprintf("Apply this plan to %d volume(s) in namespace %s?", len(acting), o.resolved.Namespace), cmdutil.ExitNeedsAction,
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

	set := o.resolved
	set.PollInterval, set.Printer, set.PendingThreshold = o.Hooks.PollInterval, pr, o.PendingThreshold
	r, err := NewRepairer(set, Backups{Dir: o.BackupDir, To: o.BackupTo, Now: o.now()})
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
func (o *Options) repairAll(ctx context.Context, r *Repairer, plan *Plan, acting []int, outs []Outcome, ev *volevents.Recorder) {
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
