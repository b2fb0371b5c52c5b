package migrate_test

import (
	"flag"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
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
	testcluster.Main(m, &cluster)
}

const (
	nodeA = "node-a"
	nodeB = "node-b"
	// waitTimeout bounds every wait of a test; a run needs a second or two.
	waitTimeout = time.Minute
	// poll makes the command's waits fast; its default is 1s.
	poll = "--poll-interval=20ms"
)

// env is one test's simulated Longhorn in its own namespace, with nodes
// node-a and node-b.
type env struct{ *testenv.Env }

func newEnv(t *testing.T, version string) *env {
	t.Helper()
	return &env{testenv.StartSim(t, cluster.RESTConfig(), testenv.Namespace("migrate"), version, 3*time.Minute, waitTimeout)}
}

// restAndVA are a release whose migrations go through Longhorn's REST API
// (1.4) and one whose go through VolumeAttachments (1.6).
var restAndVA = []string{"v1.4.3", "v1.6.0"}

// attachedEach runs body once per version, in parallel, against a simulator
// of that version with vol created migratable and attached to node-a.
func attachedEach(t *testing.T, versions []string, vol string, body func(t *testing.T, e *env, version string)) {
	t.Helper()
	testenv.PerRelease(t, versions, func(t *testing.T, version string) {
		e := newEnv(t, version)
		e.createAttached(lhsim.VolumeOptions{Migratable: true}, vol)
		body(t, e, version)
	})
}

// run runs the real command tree against the test cluster in e's namespace.
func (e *env) run(args ...string) clitest.Result {
	return clitest.New(e.T, cluster.KubeconfigPath()).Run(e.Ctx, append(args, "-n", e.NS)...)
}

// createAttached creates volumes with a replica on node-a and node-b and
// attaches them to node-a the way the CSI driver would; all at once, so the
// simulator works on them together.
func (e *env) createAttached(opts lhsim.VolumeOptions, vols ...string) {
	e.T.Helper()
	if opts.ReplicaNodes == nil {
		opts.ReplicaNodes = []string{nodeA, nodeB}
	}
	for _, vol := range vols {
		if err := e.Sim.CreateVolume(e.Ctx, vol, opts); err != nil {
			e.T.Fatal(err)
		}
	}
	for _, vol := range vols {
		e.WaitFor("volume created detached", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return v.Status.State == longhorn.VolumeStateDetached && len(es) == 1 && len(rs) == len(opts.ReplicaNodes)
		})
		if err := e.Sim.Attach(e.Ctx, vol, nodeA); err != nil {
			e.T.Fatal(err)
		}
	}
	for _, vol := range vols {
		e.WaitFor("attached to node-a and healthy", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return testenv.Settled(nodeA)(v, es, rs) && v.Status.Robustness == longhorn.RobustnessHealthy
		})
	}
}

// expectSettled asserts the volume is (now, without waiting) testenv.Settled on node
// with its data intact.
func (e *env) expectSettled(vol, node string) {
	e.T.Helper()
	v, es, rs := e.State(vol)
	if !testenv.Settled(node)(v, es, rs) {
		e.T.Errorf("volume %s not testenv.Settled on %s:\n%s", vol, node, lhsim.Describe(v, es, rs))
	}
	e.ExpectNoDataLoss(vol)
}

// va reads the volume's longhorn.io VolumeAttachment.
func (e *env) va(vol string) *longhorn.VolumeAttachment {
	e.T.Helper()
	return testenv.Decode[longhorn.VolumeAttachment](e.T, e.Get(longhorn.VolumeAttachments, vol))
}

// resourceVersions maps kind/name to resourceVersion for every Longhorn
// object in e's namespace: equal maps mean nothing was written.
func (e *env) resourceVersions() map[string]string {
	e.T.Helper()
	rvs, err := testenv.ResourceVersions(e.Ctx, e.Env, longhorn.AllResources)
	if err != nil {
		e.T.Fatal(err)
	}
	return rvs
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
