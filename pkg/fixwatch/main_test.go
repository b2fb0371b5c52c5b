package fixwatch_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fixwatch"
)

// cluster is the package's API server, shared by every test. Tests that use
// the simulator run in namespaces of their own. The RBAC tests
// (TestDeployRoles) run on Kubernetes' own API server (internal/kubeserver)
// of their own, in longhorn-system, where deploy/'s Roles are.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, &cluster) }

// hooks report each guard's progress to the listeners of its namespace;
// every command a test runs gets them (run).
var hooks = fixwatch.Hooks{
	Watching:   func(ns string) { listenersOf(ns).watching() },
	Classified: func(ns, vol string, typ detect.Type, version string) { listenersOf(ns).classified(vol, typ, version) },
	Finished:   func(ns string, out fix.Outcome) { listenersOf(ns).finished(out) },
	MetricsServing: func(ns, addr string) {
		l := listenersOf(ns)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.metrics = addr
	},
	PollInterval: 50 * time.Millisecond,
}

// cli is the plugin's command line against kubeconfig with the hooks.
func cli(t testing.TB, kubeconfig string) clitest.Runner {
	return clitest.New(t, kubeconfig).Hooks(cmd.Hooks{Guard: hooks})
}

const (
	// settle is short so that tests run fast; the assertions compare the
	// guard's own timestamps with it.
	settle = 300 * time.Millisecond
	// simWait bounds each wait on the simulator or the guard.
	simWait = 90 * time.Second
)

// listeners turn the hooks, which every guard of the package shares, into
// per-namespace signals, so that parallel tests each follow their own guard.
type listeners struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every hook call
	watches int
	classes map[string]detect.Type
	seen    map[string]map[detect.Type]bool
	version map[string]string // the Longhorn version of each volume's last classification
	outs    []fix.Outcome
	metrics string // where the last guard serves its metrics
}

func (l *listeners) metricsAddr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.metrics
}

var (
	registryMu sync.Mutex
	registry   = map[string]*listeners{}
)

func listenersOf(ns string) *listeners {
	registryMu.Lock()
	defer registryMu.Unlock()
	l := registry[ns]
	if l == nil {
		l = &listeners{changed: make(chan struct{}), classes: map[string]detect.Type{}, seen: map[string]map[detect.Type]bool{}, version: map[string]string{}}
		registry[ns] = l
	}
	return l
}

func (l *listeners) wakeLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *listeners) watching() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watches++
	l.wakeLocked()
}

func (l *listeners) classified(vol string, typ detect.Type, version string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.classes[vol] = typ
	l.version[vol] = version
	if l.seen[vol] == nil {
		l.seen[vol] = map[detect.Type]bool{}
	}
	l.seen[vol][typ] = true
	l.wakeLocked()
}

func (l *listeners) finished(out fix.Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outs = append(l.outs, out)
	l.wakeLocked()
}

// await waits until cond (evaluated under the lock) holds, re-evaluating on
// every hook call; it gives up at the deadline or when the guard ends.
func (l *listeners) await(t *testing.T, ctx context.Context, done <-chan struct{}, what string, cond func(l *listeners) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, simWait)
	defer cancel()
	for {
		l.mu.Lock()
		ok, ch := cond(l), l.changed
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for the guard: %s: %v", what, ctx.Err())
		case <-done:
			l.mu.Lock()
			ok = cond(l)
			l.mu.Unlock()
			if !ok {
				t.Fatalf("the guard ended before: %s", what)
			}
			return
		case <-ch:
		}
	}
}

// guardRun is one `fix --watch` running in a goroutine through the real
// command tree.
type guardRun struct {
	t      *testing.T
	ns     string
	l      *listeners
	cancel context.CancelFunc
	done   chan struct{}
	res    clitest.Result
	start  time.Time
}

// startGuard runs `kubectl longhorn-engines fix --watch -n ns args...` with
// the given kubeconfig and returns once it watches.
func startGuard(t *testing.T, ctx context.Context, kubeconfig, ns string, args ...string) *guardRun {
	t.Helper()
	return startCommand(t, ctx, kubeconfig, ns, append([]string{"fix", "--watch", "-n", ns}, args...))
}

// startCommand runs a guard command line as given (its namespace must be
// ns) and returns once it watches.
func startCommand(t *testing.T, ctx context.Context, kubeconfig, ns string, full []string) *guardRun {
	t.Helper()
	l := listenersOf(ns)
	l.mu.Lock()
	watches0 := l.watches
	l.mu.Unlock()
	runCtx, cancel := context.WithCancel(ctx)
	r := &guardRun{t: t, ns: ns, l: l, cancel: cancel, done: make(chan struct{}), start: time.Now()}
	go func() {
		defer close(r.done)
		r.res = cli(t, kubeconfig).Run(runCtx, full...)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	l.await(t, ctx, r.done, "watching", func(l *listeners) bool { return l.watches > watches0 })
	return r
}

// stop cancels the guard's context, as SIGTERM or Ctrl-C do in main, and
// returns what it printed.
func (r *guardRun) stop() clitest.Result {
	r.t.Helper()
	r.cancel()
	return r.wait()
}

// wait waits for the guard to end by itself.
func (r *guardRun) wait() clitest.Result {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(simWait):
		r.t.Fatal("the guard did not end")
	}
	return r.res
}

// outcomes returns the repair outcomes reported so far for vol.
func (r *guardRun) outcomes(vol string) []fix.Outcome {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	var out []fix.Outcome
	for _, o := range r.l.outs {
		if o.Volume == vol {
			out = append(out, o)
		}
	}
	return out
}

// awaitOutcome waits for the guard's next repair outcome of vol.
func (r *guardRun) awaitOutcome(ctx context.Context, vol string, n int) fix.Outcome {
	r.t.Helper()
	r.l.await(r.t, ctx, r.done, fmt.Sprintf("repair outcome %d of %s", n, vol), func(l *listeners) bool {
		c := 0
		for _, o := range l.outs {
			if o.Volume == vol {
				c++
			}
		}
		return c >= n
	})
	return r.outcomes(vol)[n-1]
}

// repairedAndStopped waits for the guard's first repair outcome of vol,
// which must be a repair, checks that the volume converged on mig, and
// stops the guard, which must exit 0; it returns what the guard printed.
func (r *guardRun) repairedAndStopped(e *simEnv, vol, mig string) clitest.Result {
	r.t.Helper()
	if out := r.awaitOutcome(e.Ctx, vol, 1); out.Result != fix.ResultRepaired {
		r.t.Errorf("outcome %s: %s", out.Result, out.Detail)
	}
	e.ExpectConverged(vol, testenv.NodeB, mig)
	res := r.stop()
	if res.Code != 0 {
		r.t.Errorf("exit %d", res.Code)
	}
	return res
}

// awaitClass waits until the guard has classified vol as typ.
func (r *guardRun) awaitClass(ctx context.Context, vol string, typ detect.Type) {
	r.t.Helper()
	r.l.await(r.t, ctx, r.done, fmt.Sprintf("%s classified %s", vol, typ), func(l *listeners) bool { return l.classes[vol] == typ })
}

// everSeen tells whether the guard ever classified vol as typ.
func (r *guardRun) everSeen(vol string, typ detect.Type) bool {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return r.l.seen[vol][typ]
}

// stamped is one output line with its time.
type stamped struct {
	at   time.Time
	text string
}

// parseLines splits output into stamped lines; every line must carry an
// RFC 3339 time.
func parseLines(t *testing.T, what, out string) []stamped {
	t.Helper()
	var ls []stamped
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		ts, rest, _ := strings.Cut(line, " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Errorf("%s: line without an RFC 3339 time: %q", what, line)
			continue
		}
		ls = append(ls, stamped{at, rest})
	}
	return ls
}

func firstLine(ls []stamped, subs ...string) (stamped, bool) {
	for _, l := range ls {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l.text, s)
		}
		if all {
			return l, true
		}
	}
	return stamped{}, false
}

func countLines(ls []stamped, sub string) int {
	n := 0
	for _, l := range ls {
		if strings.Contains(l.text, sub) {
			n++
		}
	}
	return n
}

func lacks(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(text, s) {
			t.Errorf("%s contains %q", what, s)
		}
	}
}

// --- simulator ---

type simEnv struct{ *testenv.Env }

// newSim starts a simulator of version in a namespace of its own (or in ns
// when given) with two nodes.
func newSim(t *testing.T, version, ns string) *simEnv {
	t.Helper()
	if ns == "" {
		ns = testenv.Namespace("guard")
	}
	return &simEnv{testenv.StartSim(t, cluster.RESTConfig(), ns, version, 5*time.Minute, simWait)}
}

// confirmWithFault is the seed's bug: the confirm (detach node-a) runs while
// the old engine's deletion fails once; on affected releases two engines
// stay active. It returns the fault for FaultHits.
func (e *simEnv) confirmWithFault(vol string) lhsim.FaultID {
	e.T.Helper()
	fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.FailEngineDelete, Volume: vol, Engine: lhsim.RoleOld, Times: 1})
	if err := e.Sim.Detach(e.Ctx, vol, testenv.NodeA); err != nil {
		e.T.Fatal(err)
	}
	return fid
}

// produceBug runs the whole seed sequence and waits for the stuck state.
func (e *simEnv) produceBug(vol string) (old, mig string) {
	e.T.Helper()
	e.CreateAttached(vol)
	old, mig = e.StartMigration(vol)
	e.confirmWithFault(vol)
	e.WaitStuck(vol)
	return old, mig
}
