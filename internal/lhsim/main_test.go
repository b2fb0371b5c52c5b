package lhsim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, &cluster) }

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

// newAttached is newEnv with vol created and attached to node-a
// (testenv's CreateAttached).
func newAttached(t *testing.T, version, vol string) *env {
	t.Helper()
	e := newEnv(t, version)
	e.CreateAttached(vol)
	return e
}

func (e *env) va(vol string) *longhorn.VolumeAttachment {
	va, err := e.Sim.VolumeAttachment(e.Ctx, vol)
	if err != nil {
		return nil
	}
	return va
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
