package realtest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

const (
	nodeA = "node-a"
	nodeB = "node-b"
	nodeC = "node-c"
	// waitTimeout bounds each wait; Longhorn's controllers need seconds.
	waitTimeout = 2 * time.Minute
)

// env is one test's Longhorn: a namespace on the release's API server,
// Longhorn's own controllers of that release, and the simulator playing the
// instance layer beneath them.
type env struct {
	t       *testing.T
	ctx     context.Context
	release string
	c       apiServer
	ns      string
	sim     *lhsim.Sim
	lh      *lhreal.Controllers

	mu      sync.Mutex
	deleted []longhorn.Replica // the last state of every replica deleted
}

// releasesOrSkip returns the releases to run (lhreal.Releases: make test's
// sample, or LHREAL_RELEASES), skipping the test when none can run here.
func releasesOrSkip(t *testing.T) []string {
	t.Helper()
	suite.SkipIfShort(t)
	rels := lhreal.Releases()
	if len(rels) == 0 {
		t.Skip("no Longhorn release selected")
	}
	return rels
}

// onEachRelease runs body on a fresh env of each selected release that on
// accepts (every one when on is nil), each a parallel subtest named after
// its release.
func onEachRelease(t *testing.T, on func(rel string) bool, body func(t *testing.T, e *env, rel string)) {
	t.Helper()
	var rels []string
	for _, rel := range releasesOrSkip(t) {
		if on == nil || on(rel) {
			rels = append(rels, rel)
		}
	}
	testenv.PerRelease(t, rels, func(t *testing.T, rel string) { body(t, newEnv(t, rel), rel) })
}

// forEachConfirmingRelease runs a scenario on each release in parallel, in
// an env of its own, skipping the releases a confirm is not proven on; it
// marks t parallel itself.
func forEachConfirmingRelease(t *testing.T, run func(t *testing.T, e *env, rel string)) {
	t.Parallel()
	testenv.PerRelease(t, releasesOrSkip(t), func(t *testing.T, rel string) {
		skipUnprovenConfirm(t, rel)
		run(t, newEnv(t, rel), rel)
	})
}

// apiServer is the API server a test's Longhorn runs on: the release's
// CRD server (testcluster), or Kubernetes' own kube-apiserver with the
// release's CRDs (kubeserver: the soak's guard runs as the Job does, with
// its ServiceAccount, its Role and ConfigMap backups).
type apiServer interface {
	RESTConfig() *rest.Config
	KubeconfigPath() string
	Dynamic() dynamic.Interface
}

func affectedRelease(rel string) bool { return longhorn.MustParseVersion(rel).Affected() }
func fixedRelease(rel string) bool    { return !affectedRelease(rel) }

func newEnv(t *testing.T, release string) *env {
	t.Helper()
	return newEnvOn(t, release, suite.Cluster(t, release), testenv.Namespace("real"), []string{nodeA, nodeB, nodeC}, envTimeout)
}

// envTimeout bounds a test's env: its simulator and controllers stop then.
const envTimeout = 10 * time.Minute

// newEnvOn is newEnv in namespace ns of server c, on other nodes, for
// another time.
func newEnvOn(t *testing.T, release string, c apiServer, ns string, nodes []string, timeout time.Duration) *env {
	t.Helper()
	e := newBareEnvOn(t, release, c, ns, true, timeout)
	testenv.RecordScenario(t, release, true)
	for _, n := range nodes {
		if err := e.sim.AddNode(e.ctx, n, lhsim.NodeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// what lhreal.Seed writes, in this test's namespace: the nodes and the
	// engine image are the simulator's
	for name, value := range map[string]string{
		"default-engine-image":           e.sim.EngineImage(),
		"default-instance-manager-image": e.sim.InstanceManagerImage(),
	} {
		setting := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": longhorn.APIVersion, "kind": longhorn.Settings.Kind,
			"metadata": map[string]any{"name": name, "namespace": e.ns},
			"value":    value,
		}}
		if _, err := e.c.Dynamic().Resource(longhorn.Settings.GVR()).Namespace(e.ns).Create(e.ctx, setting, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.watchDeletions()
	lh, err := lhreal.Start(e.ctx, lhreal.Options{Release: release, Kubeconfig: e.c.KubeconfigPath(), Namespace: e.ns, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	e.lh = lh
	t.Cleanup(func() {
		lh.Stop()
		if t.Failed() {
			t.Logf("Longhorn %s controllers' log (tail):\n%s", release, tailLines(lh.Logs(), 60))
		}
	})
	return e
}

// newBareEnv starts a simulator (instance-only or not) in a new namespace
// of the release's API server.
func newBareEnv(t *testing.T, release string, instanceOnly bool) *env {
	t.Helper()
	return newBareEnvOn(t, release, suite.Cluster(t, release), testenv.Namespace("real"), instanceOnly, envTimeout)
}

func newBareEnvOn(t *testing.T, release string, c apiServer, ns string, instanceOnly bool, timeout time.Duration) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, release: release, c: c, ns: ns}
	s, err := lhsim.New(c.RESTConfig(), lhsim.Options{Namespace: ns, Version: release, InstanceOnly: instanceOnly})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.sim = s
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("simulator log, %s (tail):\n%s", ns, strings.Join(lastN(s.Logs(""), 30), "\n"))
		}
	})
	return e
}

// watchDeletions records the last state of every deleted replica, so a
// test can tell whether one was deleted while active.
func (e *env) watchDeletions() {
	w, err := e.c.Dynamic().Resource(longhorn.Replicas.GVR()).Namespace(e.ns).Watch(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	go func() {
		last := map[string]*unstructured.Unstructured{}
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			// the state when deletion was asked for is what the replica
			// controller acts on (it reads spec.active then)
			if ev.Type == watch.Deleted || u.GetDeletionTimestamp() != nil {
				if _, seen := last[u.GetName()]; seen && ev.Type != watch.Deleted {
					continue
				}
				last[u.GetName()] = u
				var r longhorn.Replica
				if err := testenv.FromUnstructured(u, &r); err == nil {
					e.mu.Lock()
					e.deleted = append(e.deleted, r)
					e.mu.Unlock()
				}
			}
		}
	}()
}

// activeDeleted lists replicas deleted while spec.active was true.
func (e *env) activeDeleted() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, r := range e.deleted {
		// A replica never placed on a disk holds no data: Longhorn deletes
		// a new volume's replica that failed to schedule while it is still
		// active (several controllers may place replicas for a volume nobody
		// owns yet).
		if r.Spec.NodeID == "" || r.Spec.DiskID == "" {
			continue
		}
		if r.Spec.Active && !seen[r.Name] {
			seen[r.Name] = true
			out = append(out, r.Name)
		}
	}
	return out
}

func (e *env) waitFor(what, vol string, cond func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	if err := e.sim.WaitFor(ctx, vol, cond); err != nil {
		e.t.Fatalf("Longhorn %s: %s: %v", e.release, what, err)
	}
}

func (e *env) state(vol string) (*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) {
	e.t.Helper()
	v, es, rs, err := e.sim.State(e.ctx, vol)
	if err != nil {
		e.t.Fatal(err)
	}
	return v, es, rs
}

// plugin runs the built plugin binary against this env's namespace.
func (e *env) plugin(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.pluginVia(e.c.KubeconfigPath(), args...)
}

// pluginVia runs the plugin binary through another kubeconfig (a fault
// proxy's).
func (e *env) pluginVia(kubeconfig string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	args = append(args, "--kubeconfig", kubeconfig, "-n", e.ns)
	cmd := exec.CommandContext(e.ctx, pluginBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("run plugin: %v", err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

func tailLines(s string, n int) string {
	return strings.Join(lastN(strings.Split(strings.TrimRight(s, "\n"), "\n"), n), "\n")
}

func lastN(l []string, n int) []string {
	if len(l) > n {
		return l[len(l)-n:]
	}
	return l
}

// waitRepairable polls scan until it calls vol repairable by fix: two
// active engines appear before the engines' status (replica modes, endpoint)
// has settled, and fix rightly refuses until it has.
func (e *env) waitRepairable(vol string) {
	e.t.Helper()
	e.scanUntil(vol+" is repairable by fix", vol, func(_, errOut string, code int) bool {
		return code == 1 && strings.Contains(errOut, "1 repairable by fix")
	})
}

// scanUntil polls `scan vol args...` until ok accepts its answer; the last
// answer is logged when the test fails.
func (e *env) scanUntil(what, vol string, ok func(out, errOut string, code int) bool, args ...string) {
	e.t.Helper()
	var last string
	e.t.Cleanup(func() {
		if e.t.Failed() && last != "" {
			e.t.Logf("last scan of %s: %s", vol, last)
		}
	})
	e.await(what, func() bool {
		out, errOut, code := e.plugin(append([]string{"scan", vol}, args...)...)
		last = fmt.Sprintf("exit %d: %s%s", code, out, errOut)
		return ok(out, errOut, code)
	})
}
