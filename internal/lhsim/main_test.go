package lhsim_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

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

// env is one test's simulator in a namespace of its own, with nodes
// node-a and node-b.
type env struct{ *testenv.Env }

func newEnv(t *testing.T, version string) *env {
	t.Helper()
	return &env{testenv.StartSim(t, cluster.RESTConfig(), testenv.Namespace("lhsim"), version, 2*time.Minute, waitTimeout)}
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
