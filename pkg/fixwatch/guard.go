package fixwatch

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// Config is what a Guard needs; Window.Run builds it.
type Config struct {
	Client    *readstate.Client
	Namespace string
	// Volumes limits the guard to these volumes; empty means every volume.
	Volumes []string
	// For is how long to watch; Settle how long a repairable state must
	// last, unchanged, before the guard repairs it.
	For, Settle time.Duration
	// Version is the Longhorn version read at start (it picks the informers;
	// classification follows the watched setting from then on).
	Version longhorn.Version
	// Repairer does the repairs: re-check, backup, write, verify.
	Repairer *fix.Repairer
	// Parallel bounds the repairs running at the same time.
	Parallel int
	// Progress shows each volume waiting to settle (stderr; nil: none).
	Progress *progress.Reporter
	// Events records the guard's repairs and refusals on the volumes (nil:
	// none).
	Events *volevents.Recorder
	// Hooks are set by tests only.
	Hooks Hooks
}

// Guard watches one Longhorn namespace and repairs volumes that stay in the
// #6642 state for the settle time.
type Guard struct {
	client   *readstate.Client
	ns       string
	volumes  map[string]bool
	forDur   time.Duration
	settle   time.Duration
	startVer longhorn.Version
	r        *fix.Repairer
	out      *stamper // events and repair lines (stdout)
	errOut   *stamper // progress, warnings, the summary (stderr)
	queue    workqueue.TypedInterface[string]
	sem      chan struct{}
	runCtx   context.Context
	infCtx   context.Context // runCtx, with client-go's logging off unless -v=2
	cancel   context.CancelFunc
	repairs  sync.WaitGroup

	mu       sync.Mutex
	inf      map[string]cache.SharedIndexInformer
	outage   map[string]bool
	lists    map[string]int
	lastVerb map[string]string
	fatal    error
	t        *tracker
	timers   map[string]*time.Timer
	closing  bool
	inverted []string
	records  []fix.Outcome
	progress *progress.Reporter
	settling map[string]*progress.Wait
	hooks    Hooks

	m      *metrics
	ev     *volevents.Recorder
	passMu sync.Mutex
	pass   map[string]bool // volumes the current full pass has still to classify
}

// New returns a guard writing events to out and progress to errOut.
func New(cfg Config, out, errOut *stamper) *Guard {
	g := &Guard{
		client: cfg.Client, ns: cfg.Namespace, forDur: cfg.For, settle: cfg.Settle, startVer: cfg.Version, r: cfg.Repairer,
		out: out, errOut: errOut,
		inf: map[string]cache.SharedIndexInformer{}, outage: map[string]bool{}, lists: map[string]int{}, lastVerb: map[string]string{},
		t: newTracker(cfg.Settle), timers: map[string]*time.Timer{},
		progress: cfg.Progress, settling: map[string]*progress.Wait{}, hooks: cfg.Hooks,
		m: newMetrics(), ev: cfg.Events,
	}
	if len(cfg.Volumes) > 0 {
		g.volumes = map[string]bool{}
		for _, v := range cfg.Volumes {
			g.volumes[v] = true
		}
	}
	n := cfg.Parallel
	if n < 1 {
		n = 1
	}
	g.sem = make(chan struct{}, n)
	return g
}

func (g *Guard) selected(vol string) bool { return g.volumes == nil || g.volumes[vol] }

// fail ends the run with err (the first one wins).
func (g *Guard) fail(err error) {
	g.mu.Lock()
	if g.fatal == nil {
		g.fatal = err
	}
	cancel := g.cancel
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (g *Guard) fatalErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fatal
}

// Run watches until ctx ends (SIGTERM, Ctrl-C), For passes, replica flags
// turn out inverted after a repair, or an error that retrying cannot fix
// (RBAC). It returns the report; err is set only for that last case.
func (g *Guard) Run(ctx context.Context) (*Report, error) {
	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	g.mu.Lock()
	g.runCtx, g.cancel = runCtx, cancel
	g.mu.Unlock()
	g.queue = workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "longhorn-engines-guard"})

	// client-go's own log lines (watch ended, retrying, ...) repeat what the
	// guard reports in its own lines; keep them for -v.
	infCtx := runCtx
	if !klog.V(2).Enabled() {
		infCtx = klog.NewContext(runCtx, klog.Logger{})
	}
	g.infCtx = infCtx
	var synced []cache.InformerSynced
	for _, r := range watchedResources(g.startVer) {
		inf, err := g.startInformer(infCtx, r)
		if err != nil {
			return nil, err
		}
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(runCtx.Done(), synced...) {
		if err := g.fatalErr(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("interrupted before the watches were set up: nothing was watched or changed")
	}
	if err := g.checkSelection(); err != nil {
		return nil, err
	}

	vols := g.volumeNames()
	ver, _ := g.version()
	until := start.Add(g.forDur)
	g.errOut.Printf("watching %s in namespace %s (Longhorn %s, %d volume(s)) for %s, until %s; a volume is repaired once it has stayed repairable for %s (%s)",
		watchedList(g), g.ns, ver, len(vols), g.forDur, until.UTC().Format(TimeFormat), g.settle, g.modeText())
	g.hooks.watching(g.ns)
	g.m.windowEnd.Set(float64(until.Unix()))
	g.startPass(vols)
	go g.passes(runCtx)
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		for g.processNext() {
		}
	}()

	window := time.NewTimer(time.Until(until))
	defer window.Stop()
	reason := ""
	select {
	case <-window.C:
		reason = fmt.Sprintf("--for %s elapsed", g.forDur)
	case <-runCtx.Done():
	}
	switch {
	case ctx.Err() != nil:
		reason = "interrupted (SIGTERM or Ctrl-C)"
	case g.fatalErr() != nil:
		reason = "stopped by an error"
	case g.stoppedByInversion():
		reason = "stopped: replica flags are inverted after a repair"
	}

	// Stop starting repairs; let running ones finish (a signal or an error
	// cancels them through runCtx), then drain the queue and classify once
	// more from the caches for the summary.
	g.mu.Lock()
	g.closing = true
	for _, tm := range g.timers {
		tm.Stop()
	}
	running := 0
	for _, vs := range g.t.vols {
		if vs.repairing {
			running++
		}
	}
	g.mu.Unlock()
	if running > 0 {
		g.errOut.Printf("stopping: %s; waiting for %d running repair(s)", reason, running)
	} else {
		g.errOut.Printf("stopping: %s", reason)
	}
	g.repairs.Wait()
	g.queue.ShutDown()
	<-workerDone

	rep := g.report(start, reason)
	cancel()
	return rep, g.fatalErr()
}

// checkSelection refuses volume names the cache does not know: a typo would
// otherwise guard nothing for hours. With no volumes at all and no version
// setting, the namespace is most likely wrong.
func (g *Guard) checkSelection() error {
	have := map[string]bool{}
	for _, k := range g.informer(longhorn.Volumes).GetStore().ListKeys() {
		if _, name, err := cache.SplitMetaNamespaceKey(k); err == nil {
			have[name] = true
		}
	}
	var missing []string
	for v := range g.volumes {
		if !have[v] {
			missing = append(missing, v)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return &readstate.NotFoundError{Names: missing, Namespace: g.ns}
	}
	if v, _ := g.version(); !v.Known() && len(have) == 0 {
		return fmt.Errorf("no Longhorn found in namespace %q (no volumes and no %s setting): is the namespace right? Use -n", g.ns, longhorn.VersionSetting)
	}
	return nil
}

func watchedList(g *Guard) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, r := range []longhorn.Resource{longhorn.Volumes, longhorn.Engines, longhorn.Replicas, longhorn.VolumeAttachments, longhorn.EngineFrontends} {
		if g.inf[r.Plural] != nil {
			out = append(out, r.Plural)
		}
	}
	return strings.Join(out, ", ")
}

func (g *Guard) modeText() string {
	s := fmt.Sprintf("strategy %s", g.r.Strategy)
	switch g.r.DryRun {
	case cmdutil.DryRunClient:
		s += ", --dry-run=client: nothing is sent"
	case cmdutil.DryRunServer:
		s += ", --dry-run=server: writes are validated, not persisted"
	}
	return s
}

func (g *Guard) stoppedByInversion() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.inverted) > 0
}

// processNext classifies one queued volume from the caches.
func (g *Guard) processNext() bool {
	vol, shutdown := g.queue.Get()
	if shutdown {
		return false
	}
	defer g.queue.Done(vol)
	g.process(vol)
	return true
}

var detectOpts = detect.Options{PendingThreshold: detect.DefaultPendingThreshold, SkipOrphans: true}

func (g *Guard) process(vol string) {
	now := time.Now()
	st, found, err := g.stateFor(vol, now)
	if err != nil {
		g.errOut.Printf("warning: volume %s: %v", vol, err)
		g.passDone(vol)
		return
	}
	if !found {
		g.m.gone(vol)
		g.passDone(vol)
		g.mu.Lock()
		g.t.forget(vol)
		g.showSettling(vol, nil, step{}, signature{})
		if tm := g.timers[vol]; tm != nil {
			tm.Stop()
			delete(g.timers, vol)
		}
		g.mu.Unlock()
		return
	}
	var f *detect.Finding
	if x, ok := detect.ClassifyVolume(st, vol, detectOpts); ok {
		f = &x
	}
	sig := signatureOf(f)
	g.m.setLonghornVersion(st.Version.String())
	g.m.classified(vol, f, now)
	defer g.passDone(vol)

	g.mu.Lock()
	now = time.Now()
	delay := f != nil && f.Severity.NeedsAttention() && sig.empty()
	report, prev, lasted, classWait := g.t.report(vol, classKey(f, sig), delay, now)
	if report && (f != nil || prev != "") {
		now = g.out.Line(func(t time.Time) string { return classLine(vol, f, sig, t, g.settle, lasted) })
		if f != nil && f.Severity.NeedsAttention() && sig.empty() {
			g.refused(st, vol, f)
		}
	}
	s := g.t.observe(vol, now, sig)
	if w := minWait(s.wait, classWait); w > 0 && !g.closing {
		if tm := g.timers[vol]; tm != nil {
			tm.Stop()
		}
		g.timers[vol] = time.AfterFunc(w, func() { g.queue.Add(vol) })
	}
	g.showSettling(vol, st, s, sig)
	switch {
	case s.repair && g.closing:
		g.t.finished(vol, sig, fix.Outcome{Volume: vol, Result: fix.ResultNotAttempted, Detail: "the guard was stopping"}, now)
	case s.repair:
		since := g.t.since(vol)
		g.out.Line(func(t time.Time) string {
			return fmt.Sprintf("%s %q has stayed repairable for %s (since %s): repairing", longhorn.Volumes.Qualified(), vol,
				cmdutil.Duration(t.Sub(since)), since.UTC().Format(TimeFormat))
		})
		g.m.repairStarting(vol)
		g.repairs.Add(1)
		go g.repair(vol, sig)
	}
	g.mu.Unlock()
	g.hooks.classified(g.ns, vol, f, st.Version.String())
}

// showSettling keeps one progress wait per volume whose repairable state
// is settling: from when it was first seen, for the settle time, with the
// volume's engines. Called with g.mu held.
func (g *Guard) showSettling(vol string, st *longhorn.State, s step, sig signature) {
	w := g.settling[vol]
	if sig.empty() || s.repair || s.wait <= 0 || st == nil {
		if w != nil {
			w.End()
			delete(g.settling, vol)
		}
		return
	}
	since := g.t.since(vol)
	if w == nil {
		w = g.progress.BeginAt(fmt.Sprintf("volume %q settling before repair", vol), g.settle, since)
		g.settling[vol] = w
	}
	w.Update("repairs at "+since.Add(g.settle).UTC().Format(TimeFormat)+" if unchanged", progress.Engines(vol, st.Engines))
}

// minWait is the earlier of two waits, ignoring zeros.
func minWait(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// classLine reports a new classification of a volume; lasted is how long a
// delayed one had lasted when it was reported.
func classLine(vol string, f *detect.Finding, sig signature, now time.Time, settle, lasted time.Duration) string {
	head := fmt.Sprintf("%s %q", longhorn.Volumes.Qualified(), vol)
	if f == nil {
		return head + " healthy: at most one active engine and no migration"
	}
	line := fmt.Sprintf("%s %s (%s", head, f.Type, f.Severity)
	if lasted > 0 {
		line += ", for " + cmdutil.Duration(lasted)
	}
	line += "): " + f.Reason
	switch {
	case f.Family != nil && f.Action.Writes():
		// fix repairs it where proven; the guard only reports it (its
		// settle rule follows engines, not the volume's status)
		line += fmt.Sprintf("; the guard does not repair it: run kubectl longhorn-engines fix %s (%s)", vol, f.Family.Doc)
	case f.Family != nil:
		// the stuck-migration family: the guard never repairs it
		line += fmt.Sprintf("; repair it by hand: kubectl longhorn-engines describe %s (%s)", vol, f.Family.Doc)
	}
	if !sig.empty() {
		line += fmt.Sprintf("; the guard will %s %s if this lasts %s, at %s", f.Action, strings.Join(f.Stale, ", "), settle,
			now.Add(settle).UTC().Format(TimeFormat))
	}
	return line
}
