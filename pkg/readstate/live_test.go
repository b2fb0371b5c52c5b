//go:build !fuzz

package readstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

// The API server starts only for the tests that need one, so the parser and
// fuzz tests of this package stay quick.
var (
	clusterOnce sync.Once
	liveCluster *testcluster.Cluster
	clusterErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if liveCluster != nil {
		liveCluster.Stop()
	}
	os.Exit(code)
}

func cluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an API server")
	}
	clusterOnce.Do(func() { liveCluster, clusterErr = testcluster.Start(context.Background(), testcluster.Options{}) })
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return liveCluster
}

// countingClient is a client whose HTTP requests are counted.
func countingClient(t *testing.T, c *testcluster.Cluster) (*readstate.Client, *atomic.Int64) {
	t.Helper()
	n := &atomic.Int64{}
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) { n.Add(1); return rt.RoundTrip(r) })
	}
	cfg.QPS, cfg.Burst = -1, 0
	cl, err := readstate.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cl, n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func seed(t *testing.T, c *testcluster.Cluster, ns string, first, volumes int) {
	t.Helper()
	create := func(ctx context.Context, u *unstructured.Unstructured) error { _, err := c.Create(ctx, u); return err }
	if err := testenv.Seed(context.Background(), create, ns, testenv.SeedOptions{Volumes: volumes, First: first, StuckEvery: 10}); err != nil {
		t.Fatal(err)
	}
}

// A named volume costs the same few requests on a cluster of 20 volumes and
// on one of 400 (2,400 objects), while a namespace read grows with it.
func TestNamedVolumeRequestsDoNotGrowWithTheCluster(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	const ns = "scale"
	cl, n := countingClient(t, c)
	measure := func() (named, load, whole int64) {
		n.Store(0)
		vr, err := readstate.ReadVolume(ctx, cl, ns, "pvc-00010")
		if err != nil || !vr.Found || len(vr.State.Engines) != 2 || len(vr.State.Replicas) != 3 || len(vr.State.VolumeAttachments) != 1 {
			t.Fatalf("read of pvc-00010: %v %+v", err, vr)
		}
		named = n.Swap(0)
		if _, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns, Volumes: []string{"pvc-00010"}}); err != nil {
			t.Fatal(err)
		}
		load = n.Swap(0)
		if _, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns, PageSize: 100}); err != nil {
			t.Fatal(err)
		}
		return named, load, n.Swap(0)
	}
	seed(t, c, ns, 0, 20)
	small, smallLoad, smallWhole := measure()
	seed(t, c, ns, 20, 380)
	large, largeLoad, largeWhole := measure()
	t.Logf("requests for one volume: %d (ReadVolume), %d (Load) at 20 and %d, %d at 400 volumes; whole namespace %d and %d",
		small, smallLoad, large, largeLoad, smallWhole, largeWhole)
	// version, the replica-auto-balance setting (fix's extra-replica
	// clean-up precondition), volume, engines, replicas, attachment,
	// storage.k8s.io volumeattachments (the seeded volumes name no PVC
	// namespace, so no pods are listed; with one it is one more list, see
	// TestNamedVolumeReadsPodsOfItsNamespaceOnly).
	if small != 7 || large != 7 || smallLoad != 7 || largeLoad != 7 {
		t.Errorf("one volume took %d/%d requests at 20 volumes and %d/%d at 400, want 7 each", small, smallLoad, large, largeLoad)
	}
	if largeWhole <= smallWhole {
		t.Errorf("the namespace read should grow with the cluster (page size 100): %d then %d requests", smallWhole, largeWhole)
	}
}

// The named path and the namespace path give the same typed state and the
// same findings, on every state of a random draw, and the concurrent,
// pipelined namespace read gives what the old sequential one gave.
func TestReadPathsAgree(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	cl, _ := countingClient(t, c)
	rng := rand.New(rand.NewPCG(13, 42))
	for _, version := range []string{"v1.4.3", "v1.5.1", "v1.6.0", "v1.12.1"} {
		ns := "diff-" + strings.ReplaceAll(strings.TrimPrefix(version, "v"), ".", "-")
		var all testenv.Objects
		all.Version = version
		all.Add(testenv.Nodes())
		for _, sc := range testenv.Scenarios {
			all.Add(sc.Build(version, sc.Name))
		}
		for i := 0; i < 25; i++ {
			all.Add(randomState(rng, version, fmt.Sprintf("rnd-%02d", i)))
		}
		all.Add(orphans(version)).Add(invertedFlags(version, "inverted")).Add(noActiveEngine(version, "no-active"))
		createIn(t, c, ns, &all)

		// Small pages, so that pagination and the early page requests run.
		for _, page := range []int{0, 3, 7} {
			old, err := sequentialLoad(ctx, cl, ns, page)
			if err != nil {
				t.Fatal(err)
			}
			st, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns, PageSize: page})
			if err != nil {
				t.Fatal(err)
			}
			old.Now = st.Now // ages are measured from the read
			want, got := detect.Classify(old, detect.Options{}), detect.Classify(st, detect.Options{})
			if wr, gr := js(scan.NewReport(old, want, "cluster")), js(scan.NewReport(st, got, "cluster")); wr != gr {
				t.Fatalf("%s page %d: reports differ:\nold %s\nnew %s", version, page, wr, gr)
			}
			if want.NeedsAttention() != got.NeedsAttention() || len(got.Findings) == 0 {
				t.Fatalf("%s: exit codes differ or nothing found", version)
			}
			if page == 0 {
				checkTypes(t, version, got)
			}
		}
		// Each volume read alone is judged as the namespace read judges it.
		whole, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range whole.Volumes {
			if hasMislabelled(all.Engines, v.Name) {
				continue
			}
			named, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns, Volumes: []string{v.Name}})
			if err != nil {
				t.Fatal(err)
			}
			named.Now = whole.Now
			o := detect.Options{SkipOrphans: true}
			wf, wok := detect.ClassifyVolume(whole, v.Name, o)
			nf, nok := detect.ClassifyVolume(named, v.Name, o)
			if wok != nok || js(wf) != js(nf) {
				t.Fatalf("%s %s: named read %s, namespace read %s", version, v.Name, js(nf), js(wf))
			}
		}
	}
}

// checkTypes makes sure the draw covers every finding type a live read can
// produce (log evidence exists only offline).
func checkTypes(t *testing.T, version string, res detect.Result) {
	t.Helper()
	seen := map[detect.Type]bool{}
	for _, f := range res.Findings {
		seen[f.Type] = true
	}
	for _, ty := range []detect.Type{detect.TypeMultipleActiveEngines, detect.TypeMigrationInFlight, detect.TypePendingCleanup,
		detect.TypeOrphanEngine, detect.TypeOrphanEngineProcess, detect.TypeNoActiveEngine, detect.TypeDanglingReplicas} {
		if !seen[ty] {
			t.Errorf("%s: no %s finding in the draw (have %v)", version, ty, seen)
		}
	}
}

// randomState is a #6642 state or a migration with random changes, some of
// them on what the readers look at: labels, spec.volumeName, deletion.
func randomState(rng *rand.Rand, version, vol string) *testenv.Objects {
	var o *testenv.Objects
	switch rng.IntN(3) {
	case 0:
		o = testenv.MidMigration(version, vol)
	default:
		o = testenv.TwoActiveEngines(version, vol)
	}
	for n := rng.IntN(4); n > 0; n-- {
		switch rng.IntN(9) {
		case 0: // owned by the label only
			o.Engines[rng.IntN(len(o.Engines))].Spec.VolumeName = ""
		case 1:
			o.Replicas[rng.IntN(len(o.Replicas))].Spec.VolumeName = ""
		case 2: // pending cleanup
			o.Deleting = append(o.Deleting, o.Engines[rng.IntN(len(o.Engines))].Name)
		case 3: // no active engine
			for _, e := range o.Engines {
				e.Spec.Active = false
			}
		case 4: // inverted flags
			for _, r := range o.Replicas {
				r.Spec.Active = !r.Spec.Active
			}
		case 5:
			o.Engines[1].Status.CurrentState = longhorn.StateStopped
		case 6:
			o.Volumes[0].Status.Robustness = longhorn.RobustnessDegraded
		case 7: // an engine of this volume labelled for another one
			o.Engines[0].Labels[longhorn.VolumeLabel] = mislabelled
		case 8:
			o.Volumes[0].Status.CurrentNodeID = testenv.NodeA
		}
	}
	return o
}

// mislabelled is the longhornvolume label of an engine whose spec names
// another volume. A namespace read judges it by spec.volumeName; a named read
// selects by the label, as longhorn-manager does, and does not see it: the
// one place where the two reads may differ (docs/performance.md).
const mislabelled = "elsewhere"

func hasMislabelled(engines []*longhorn.Engine, vol string) bool {
	// The created objects, not a read: a LIST drops labels the spec makes
	// redundant (slim).
	for _, e := range engines {
		if e.Spec.VolumeName == vol && e.Labels[longhorn.VolumeLabel] == mislabelled {
			return true
		}
	}
	return false
}

// invertedFlags is a finished migration whose replica flip went the wrong
// way: the serving engine's replicas are inactive, the old ones active.
func invertedFlags(version, vol string) *testenv.Objects {
	o := testenv.TwoActiveEngines(version, vol)
	o.Engines = o.Engines[1:]
	o.Volumes[0].Status.CurrentMigrationNodeID = ""
	return o
}

// noActiveEngine is an attached volume whose only engine is inactive.
func noActiveEngine(version, vol string) *testenv.Objects {
	o := testenv.Healthy(version, vol)
	o.Engines[0].Spec.Active = false
	return o
}

// orphans are an engine of a volume that is gone and an engine process no
// Engine CR knows.
func orphans(version string) *testenv.Objects {
	e := testenv.NewEngine(testenv.EngineName(version, "gone", 0), "gone", testenv.NodeA, true)
	im := &longhorn.InstanceManager{ObjectMeta: longhorn.ObjectMeta{Name: "instance-manager-a"},
		Spec:   longhorn.InstanceManagerSpec{NodeID: testenv.NodeA, Type: "aio"},
		Status: longhorn.InstanceManagerStatus{CurrentState: "running", InstanceEngines: map[string]json.RawMessage{"lost-e-0": json.RawMessage(`{}`)}}}
	return &testenv.Objects{Engines: []*longhorn.Engine{e}, IMs: []*longhorn.InstanceManager{im}}
}

// createIn is testenv.Create into namespace ns.
func createIn(t *testing.T, c *testcluster.Cluster, ns string, o *testenv.Objects) {
	t.Helper()
	ctx := context.Background()
	put := func(kind string, obj any) error {
		u, err := testenv.Unstructured(kind, obj)
		if err != nil {
			return err
		}
		u.SetNamespace(ns)
		if _, err := c.Create(ctx, u); err != nil {
			return fmt.Errorf("create %s %s: %w", kind, u.GetName(), err)
		}
		return nil
	}
	if err := o.Each(put); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, name := range o.Deleting {
		if seen[name] {
			continue
		}
		seen[name] = true
		if err := c.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func js(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}
