package lhsim_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
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
type env struct{ *testenv.Env }

func newEnv(t *testing.T, version string) *env {
	t.Helper()
	return &env{testenv.StartSim(t, cluster.RESTConfig(), fmt.Sprintf("lhsim-%d", nsSeq.Add(1)), version, 2*time.Minute, waitTimeout)}
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
	e.T.Helper()
	if err := e.Sim.CreateVolume(e.Ctx, vol, lhsim.VolumeOptions{Migratable: true, ReplicaNodes: []string{nodeA, nodeB}}); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("volume created detached", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		return v.Status.State == longhorn.VolumeStateDetached && len(es) == 1 && len(rs) == 2
	})
	if err := e.Sim.Attach(e.Ctx, vol, nodeA); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("attached to node-a", vol, settled(nodeA))
	e.WaitFor("healthy", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Status.Robustness == longhorn.RobustnessHealthy
	})
}

// startMigration attaches the volume to node-b too and waits until the
// migration engine is ready (and, on 1.5+, node-b's ticket satisfied).
func (e *env) startMigration(vol string) {
	e.T.Helper()
	if err := e.Sim.Attach(e.Ctx, vol, nodeB); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("migration engine ready", vol, migrationReady)
	if e.Sim.Version().HasVolumeAttachments() {
		id := longhorn.CSITicketID(vol, nodeB)
		e.Await("node-b ticket satisfied", func() bool {
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
	va, err := e.Sim.VolumeAttachment(e.Ctx, vol)
	if err != nil {
		return nil
	}
	return va
}

func (e *env) get(r longhorn.Resource, name string) *unstructured.Unstructured {
	e.T.Helper()
	u, err := cluster.Dynamic().Resource(r.GVR()).Namespace(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return u
}

func (e *env) patchEngineInactive(name string) {
	e.T.Helper()
	_, err := cluster.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(e.NS).Patch(e.Ctx, name, types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/active","value":false}]`), metav1.PatchOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
}

func (e *env) deleteObject(r longhorn.Resource, name string) {
	e.T.Helper()
	if err := cluster.Dynamic().Resource(r.GVR()).Namespace(e.NS).Delete(e.Ctx, name, metav1.DeleteOptions{}); err != nil {
		e.T.Fatal(err)
	}
}

func (e *env) hasSyncError(vol, substr string) bool {
	for _, s := range e.Sim.SyncErrors(vol) {
		if strings.Contains(s, substr) {
			return true
		}
	}
	return false
}

func (e *env) logged(vol, substr string) bool {
	for _, l := range e.Sim.Logs(vol) {
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
