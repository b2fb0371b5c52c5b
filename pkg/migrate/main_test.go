package migrate_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// One API server for the package; every test gets a namespace and a
// simulated Longhorn of its own, so tests run in parallel.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	// The tests mostly wait on simulated controllers, not on the CPU: run
	// more of them at once than GOMAXPROCS (an explicit -parallel wins).
	if f := flag.Lookup("test.parallel"); f != nil && f.Value.String() == f.DefValue {
		_ = f.Value.Set(strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	testcluster.Main(m, func(c *testcluster.Cluster) { cluster = c })
}

const (
	nodeA = "node-a"
	nodeB = "node-b"
	// waitTimeout bounds every wait of a test; a run needs a second or two.
	waitTimeout = time.Minute
	// poll makes the command's waits fast; its default is 1s.
	poll = "--poll-interval=20ms"
)

var nsSeq atomic.Int64

// env is one test's simulated Longhorn in its own namespace, with nodes
// node-a and node-b.
type env struct {
	t   *testing.T
	ctx context.Context
	s   *lhsim.Sim
	ns  string
}

func newEnv(t *testing.T, version string) *env {
	t.Helper()
	ns := fmt.Sprintf("migrate-%d", nsSeq.Add(1))
	var logf func(string, ...any)
	if os.Getenv("LHSIM_LOGS") == "1" {
		logf = t.Logf
	}
	s, err := lhsim.New(cluster.RESTConfig(), lhsim.Options{Namespace: ns, Version: version, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	if err := s.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		cancel()
		if t.Failed() && logf == nil {
			t.Logf("simulator log (%s, Longhorn %s):\n%s", ns, version, strings.Join(s.Logs(""), "\n"))
		}
	})
	e := &env{t: t, ctx: ctx, s: s, ns: ns}
	for _, n := range []string{nodeA, nodeB} {
		if err := s.AddNode(ctx, n, lhsim.NodeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// run runs the real command tree against the test cluster in e's namespace.
func (e *env) run(args ...string) clitest.Result {
	return e.runCtx(e.ctx, args...)
}

func (e *env) runCtx(ctx context.Context, args ...string) clitest.Result {
	e.t.Helper()
	res := clitest.Run(ctx, cluster.KubeconfigPath(), append(args, "-n", e.ns)...)
	e.t.Logf("kubectl longhorn-engines %s\n%s", strings.Join(args, " "), res)
	return res
}

func (e *env) waitFor(what, vol string, cond func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	if err := e.s.WaitFor(ctx, vol, cond); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

func (e *env) state(vol string) (*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) {
	e.t.Helper()
	v, es, rs, err := e.s.State(e.ctx, vol)
	if err != nil {
		e.t.Fatal(err)
	}
	return v, es, rs
}

// createAttached creates volumes with a replica on node-a and node-b and
// attaches them to node-a the way the CSI driver would; all at once, so the
// simulator works on them together.
func (e *env) createAttached(opts lhsim.VolumeOptions, vols ...string) {
	e.t.Helper()
	if opts.ReplicaNodes == nil {
		opts.ReplicaNodes = []string{nodeA, nodeB}
	}
	for _, vol := range vols {
		if err := e.s.CreateVolume(e.ctx, vol, opts); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, vol := range vols {
		e.waitFor("volume created detached", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return v.Status.State == longhorn.VolumeStateDetached && len(es) == 1 && len(rs) == len(opts.ReplicaNodes)
		})
		if err := e.s.Attach(e.ctx, vol, nodeA); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, vol := range vols {
		e.waitFor("attached to node-a and healthy", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return settled(nodeA)(v, es, rs) && v.Status.Robustness == longhorn.RobustnessHealthy
		})
	}
}

// settled: exactly one engine, active, running on node, every replica
// serving it and active, no migration left (what the command verifies,
// checked here independently).
func settled(node string) func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool {
	return func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		if len(es) != 1 || !es[0].Spec.Active || es[0].Spec.NodeID != node || es[0].Status.CurrentState != longhorn.StateRunning {
			return false
		}
		if v.Spec.NodeID != node || v.Status.CurrentNodeID != node || v.Spec.MigrationNodeID != "" ||
			v.Status.CurrentMigrationNodeID != "" || v.Status.State != longhorn.VolumeStateAttached || len(rs) == 0 {
			return false
		}
		for _, r := range rs {
			if r.Spec.EngineName != es[0].Name || !r.Spec.Active || r.DeletionTimestamp != nil {
				return false
			}
		}
		return true
	}
}

// expectSettled asserts the volume is (now, without waiting) settled on node
// with its data intact.
func (e *env) expectSettled(vol, node string) {
	e.t.Helper()
	v, es, rs := e.state(vol)
	if !settled(node)(v, es, rs) {
		e.t.Errorf("volume %s not settled on %s:\n%s", vol, node, lhsim.Describe(v, es, rs))
	}
	e.expectNoDataLoss(vol)
}

func (e *env) expectNoDataLoss(vol string) {
	e.t.Helper()
	lost, err := e.s.DataLost(e.ctx, vol)
	if err != nil {
		e.t.Fatal(err)
	}
	if lost {
		e.t.Errorf("volume %s lost its data (wiped: %v)", vol, e.s.WipedDirs(vol))
	}
}

// va reads the volume's longhorn.io VolumeAttachment.
func (e *env) va(vol string) *longhorn.VolumeAttachment {
	e.t.Helper()
	u, err := cluster.Dynamic().Resource(longhorn.VolumeAttachments.GVR()).Namespace(e.ns).Get(e.ctx, vol, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	va := &longhorn.VolumeAttachment{}
	if err := fromUnstructured(u.Object, va); err != nil {
		e.t.Fatal(err)
	}
	return va
}

// resourceVersions maps kind/name to resourceVersion for every Longhorn
// object in e's namespace: equal maps mean nothing was written.
func (e *env) resourceVersions() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, r := range longhorn.AllResources {
		l, err := cluster.Dynamic().Resource(r.GVR()).Namespace(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, it := range l.Items {
			out[r.Plural+"/"+it.GetName()] = it.GetResourceVersion()
		}
	}
	return out
}

func expectCode(t *testing.T, res clitest.Result, want int) {
	t.Helper()
	if res.Code != want {
		t.Fatalf("exit %d, want %d\n%s", res.Code, want, res)
	}
}

func expectContains(t *testing.T, where, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", where, w, got)
		}
	}
}

func expectNotContains(t *testing.T, where, got string, nots ...string) {
	t.Helper()
	for _, w := range nots {
		if strings.Contains(got, w) {
			t.Errorf("%s contains %q:\n%s", where, w, got)
		}
	}
}

func fromUnstructured(obj map[string]any, into any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
