package realtest

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// pausedWhile stops Longhorn's controllers, runs fn, and starts them again,
// so that Longhorn's first sync afterwards sees everything fn wrote at
// once: a migration request landing between a write and Longhorn's next
// sync, made deterministic.
//
// With lhsim's own controllers, its volume controller is held instead.
func (e *env) pausedWhile(fn func()) {
	e.t.Helper()
	if e.lh == nil {
		hold := e.sim.Inject(lhsim.Fault{Kind: lhsim.HoldVolumeSync})
		fn()
		e.sim.ClearFault(hold)
		return
	}
	e.lh.Stop()
	fn()
	lh, err := lhreal.Start(e.ctx, lhreal.Options{Release: e.release, Kubeconfig: e.c.KubeconfigPath(), Namespace: e.ns,
		Nodes: []string{nodeA, nodeB, nodeC}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.lh = lh
	e.t.Cleanup(lh.Stop)
}

// requestMigration asks for a migration to node-c as a drain's CSI attach
// does: spec.migrationNodeID on 1.3/1.4 (the REST API's checks are not run
// here: the controllers are stopped), a csi ticket for node-c on 1.5+.
func (e *env) requestMigration(vol string) {
	e.t.Helper()
	if longhorn.MustParseVersion(e.release).HasVolumeAttachments() {
		if err := e.sim.Attach(e.ctx, vol, nodeC); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	_, err := e.c.Dynamic().Resource(longhorn.Volumes.GVR()).Namespace(e.ns).Patch(e.ctx, vol, types.MergePatchType,
		[]byte(`{"spec":{"migrationNodeID":"`+nodeC+`"}}`), metav1.PatchOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

// stuck brings vol to two active engines the way a user meets them on this
// release: the seed's sequence on an affected release, a volume stuck
// before the upgrade on a fixed one. It returns the stale engine.
func (e *env) stuck(vol string) string {
	e.t.Helper()
	if !longhorn.MustParseVersion(e.release).Affected() {
		old, _ := e.stuckBeforeUpgrade(vol)
		return old
	}
	old := e.seedState(vol)
	e.waitRefused(vol)
	return old
}

// waitRefused waits until Longhorn refuses vol's two active engines: the
// BUG line in the controllers' log, or lhsim's sync error.
func (e *env) waitRefused(vol string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	var err error
	if e.lh != nil {
		err = e.lh.WaitLog(ctx, bugLine)
	} else {
		err = e.sim.Await(ctx, func() bool { return strings.Contains(e.sim.LastSyncError(vol), bugLine) })
	}
	if err != nil {
		e.t.Fatalf("Longhorn %s never refused two active engines: %v", e.release, err)
	}
}

// TestMigrationRequestAfterRepair, on Longhorn's own controllers: a
// migration request that reaches Longhorn together with fix's writes wipes
// nothing after fix's order (replica flags first), while on an affected
// release the old order (only the stale engine deactivated) makes
// Longhorn's revert delete the old replicas while active and wipe the
// directories the survivor shares. Fixed releases finish the confirm
// first, so there the old order is harmless too.
func TestMigrationRequestAfterRepair(t *testing.T) {
	t.Parallel()
	for _, rel := range releasesOrSkip(t) {
		t.Run(rel+"/fix", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, rel)
			vol := "vol-race"
			old := e.stuck(vol)
			e.waitRepairable(vol)
			e.pausedWhile(func() {
				out, errOut, code := e.plugin("fix", vol, "--yes", "--wait=false", "--backup-dir", t.TempDir())
				if code != 0 {
					t.Fatalf("fix exited %d\n--- stdout\n%s--- stderr\n%s", code, out, errOut)
				}
				e.requestMigration(vol)
			})
			// Longhorn reverts (deletes the old engine and replicas, now
			// inactive) and starts the requested migration.
			e.waitFor("old engine gone, migration to node-c under way", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
				return testenv.EngineNamed(es, old) == nil && v.Spec.MigrationNodeID == nodeC
			})
			if l := e.activeDeleted(); len(l) > 0 {
				t.Errorf("replicas deleted while active: %v", l)
			}
			if w := e.sim.WipedDirs(vol); len(w) > 0 {
				t.Errorf("data directories wiped: %v", w)
			}
			// The drain gives up: roll the request back; Longhorn settles.
			if err := e.sim.Detach(e.ctx, vol, nodeC); err != nil {
				t.Fatal(err)
			}
			e.waitFor("converged on node-b", vol, settled(nodeB))
			if l := e.activeDeleted(); len(l) > 0 {
				t.Errorf("replicas deleted while active: %v", l)
			}
			if lost, err := e.sim.DataLost(e.ctx, vol); err != nil || lost {
				t.Errorf("data lost: %v %v (wiped %v)", lost, err, e.sim.WipedDirs(vol))
			}
		})
		t.Run(rel+"/old-order", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, rel)
			vol := "vol-old-order"
			old := e.stuck(vol)
			e.pausedWhile(func() {
				_, err := e.c.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(e.ns).Patch(e.ctx, old, types.JSONPatchType,
					[]byte(`[{"op":"replace","path":"/spec/active","value":false}]`), metav1.PatchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				e.requestMigration(vol)
			})
			if !longhorn.MustParseVersion(rel).Affected() {
				// A fixed release finishes the confirm before it looks at
				// the request: the old order is harmless there.
				e.waitFor("old engine gone, migration to node-c under way", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
					return testenv.EngineNamed(es, old) == nil && v.Spec.MigrationNodeID == nodeC && testenv.EngineOn(es, nodeC) != nil
				})
				e.assertNoDamage(vol)
				return
			}
			e.waitFor("old replicas deleted", vol, func(_ *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
				return len(e.activeDeleted()) > 0
			})
			ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
			defer cancel()
			if err := e.sim.Await(ctx, func() bool { return len(e.sim.WipedDirs(vol)) > 0 }); err != nil {
				t.Fatalf("the old order wiped nothing: %v", err)
			}
		})
	}
}
