package lhsim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	testcluster.Main(m, func(c *testcluster.Cluster) { cluster = c })
}

const (
	nodeA = "node-a"
	nodeB = "node-b"
	// waitTimeout bounds every wait; a healthy run needs well under a second each.
	waitTimeout = 60 * time.Second
)

var nsSeq atomic.Int64

// env is one test's simulator in a namespace of its own, with nodes
// node-a and node-b.
type env struct {
	t   *testing.T
	ctx context.Context
	s   *lhsim.Sim
	ns  string
}

func newEnv(t *testing.T, version string) *env {
	t.Helper()
	ns := fmt.Sprintf("lhsim-%d", nsSeq.Add(1))
	var logf func(string, ...any)
	if os.Getenv("LHSIM_LOGS") == "1" {
		logf = t.Logf
	}
	s, err := lhsim.New(cluster.RESTConfig(), lhsim.Options{Namespace: ns, Version: version, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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

func (e *env) waitFor(what, vol string, cond func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	if err := e.s.WaitFor(ctx, vol, cond); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

func (e *env) await(what string, cond func() bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	if err := e.s.Await(ctx, cond); err != nil {
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

func engineOn(es []longhorn.Engine, node string) *longhorn.Engine {
	for i := range es {
		if es[i].Spec.NodeID == node {
			return &es[i]
		}
	}
	return nil
}

func activeCount(es []longhorn.Engine) int {
	n := 0
	for _, e := range es {
		if e.Spec.Active {
			n++
		}
	}
	return n
}

// settled: exactly one engine, active, running on node, every replica
// serving it and active, no migration left.
func settled(node string) func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool {
	return func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		if len(es) != 1 || !es[0].Spec.Active || es[0].Spec.NodeID != node || es[0].Status.CurrentState != longhorn.StateRunning {
			return false
		}
		if v.Spec.NodeID != node || v.Status.CurrentNodeID != node || v.Spec.MigrationNodeID != "" ||
			v.Status.CurrentMigrationNodeID != "" || v.Status.State != longhorn.VolumeStateAttached {
			return false
		}
		if len(rs) == 0 {
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

// createAttached creates a migratable volume with a replica on each node
// and attaches it to node-a.
func (e *env) createAttached(vol string) {
	e.t.Helper()
	if err := e.s.CreateVolume(e.ctx, vol, lhsim.VolumeOptions{Migratable: true, ReplicaNodes: []string{nodeA, nodeB}}); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor("volume created detached", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		return v.Status.State == longhorn.VolumeStateDetached && len(es) == 1 && len(rs) == 2
	})
	if err := e.s.Attach(e.ctx, vol, nodeA); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor("attached to node-a", vol, settled(nodeA))
	e.waitFor("healthy", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Status.Robustness == longhorn.RobustnessHealthy
	})
}

// startMigration attaches the volume to node-b too and waits until the
// migration engine is ready (and, on 1.5+, node-b's ticket satisfied).
func (e *env) startMigration(vol string) {
	e.t.Helper()
	if err := e.s.Attach(e.ctx, vol, nodeB); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor("migration engine ready", vol, migrationReady)
	if e.s.Version().HasVolumeAttachments() {
		id := longhorn.CSITicketID(vol, nodeB)
		e.await("node-b ticket satisfied", func() bool {
			va := e.va(vol)
			return va != nil && va.Satisfied(id)
		})
	}
}

func migrationReady(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
	if v.Spec.MigrationNodeID != nodeB || len(es) != 2 {
		return false
	}
	old, mig := engineOn(es, nodeA), engineOn(es, nodeB)
	if old == nil || mig == nil || !old.Spec.Active || mig.Spec.Active {
		return false
	}
	if mig.Status.CurrentState != longhorn.StateRunning || mig.Status.Endpoint == "" || mig.RWCount() != old.RWCount() ||
		mig.RWCount() == 0 {
		return false
	}
	return len(rs) == 4
}

func (e *env) va(vol string) *longhorn.VolumeAttachment {
	va, err := e.s.VolumeAttachment(e.ctx, vol)
	if err != nil {
		return nil
	}
	return va
}

func (e *env) get(r longhorn.Resource, name string) *unstructured.Unstructured {
	e.t.Helper()
	u, err := cluster.Dynamic().Resource(r.GVR()).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

func (e *env) patchEngineInactive(name string) {
	e.t.Helper()
	_, err := cluster.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(e.ns).Patch(e.ctx, name, types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/active","value":false}]`), metav1.PatchOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deleteObject(r longhorn.Resource, name string) {
	e.t.Helper()
	if err := cluster.Dynamic().Resource(r.GVR()).Namespace(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) hasSyncError(vol, substr string) bool {
	for _, s := range e.s.SyncErrors(vol) {
		if strings.Contains(s, substr) {
			return true
		}
	}
	return false
}

func (e *env) logged(vol, substr string) bool {
	for _, l := range e.s.Logs(vol) {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

func fromU(u *unstructured.Unstructured, into any) error {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
