package realtest

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// stuckBeforeUpgrade leaves, under a fixed release's own controllers, what
// a confirm that failed on an affected release saved before the upgrade:
// the confirm requested (node-a's attachment gone, spec.nodeID node-b), the
// migration engine active beside the old one, status.currentNodeID moved,
// no currentMigrationNodeID (1.4 has none), the replica flags as the
// migration left them. The controllers are stopped while it is written, as
// longhorn-manager is during an upgrade; Longhorn's upgrade code is not
// run. It returns the old and the surviving engine.
func (e *env) stuckBeforeUpgrade(vol string) (old, mig string) {
	e.t.Helper()
	e.attached(vol)
	old, mig = e.migrating(vol)
	dyn := e.c.Dynamic()
	patch := func(r longhorn.Resource, name string, pt types.PatchType, body string, sub ...string) {
		e.t.Helper()
		if _, err := dyn.Resource(r.GVR()).Namespace(e.ns).Patch(e.ctx, name, pt, []byte(body), metav1.PatchOptions{}, sub...); err != nil {
			e.t.Fatal(err)
		}
	}
	for attempt := 1; ; attempt++ {
		written := false
		e.pausedWhile(func() {
			// Longhorn may have restarted the migration engine since it was
			// ready (it does when its replica map lags a clone): write the
			// stuck state only over a running one.
			_, es, _ := e.state(vol)
			if m := testenv.EngineNamed(es, mig); m == nil || m.Spec.NodeID != nodeB || m.Status.CurrentState != longhorn.StateRunning || testenv.EngineNamed(es, old) == nil {
				return
			}
			if err := e.sim.Detach(e.ctx, vol, nodeA); err != nil { // the CSI detach that asked for the confirm
				e.t.Fatal(err)
			}
			patch(longhorn.Volumes, vol, types.MergePatchType, `{"spec":{"nodeID":"`+nodeB+`","migrationNodeID":""}}`)
			patch(longhorn.Engines, mig, types.JSONPatchType, `[{"op":"replace","path":"/spec/active","value":true}]`)
			patch(longhorn.Volumes, vol, types.MergePatchType, `{"status":{"currentNodeID":"`+nodeB+`","currentMigrationNodeID":""}}`, "status")
			written = true
		})
		if written {
			break
		}
		if attempt == 3 {
			e.t.Fatalf("Longhorn %s kept restarting the migration engine of %s", e.release, vol)
		}
		old, mig = e.migrationReady(vol)
	}
	e.waitFor("two active engines", vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
		return len(es) == 2 && testenv.ActiveCount(es) == 2
	})
	e.waitRefused(vol)
	return old, mig
}

// TestFixStuckBeforeUpgrade: a volume stuck before an upgrade stays stuck on
// a fixed release (its controller still refuses two active engines); fix
// repairs it there, and that release's own controller converges with no
// replica deleted while active and nothing wiped.
func TestFixStuckBeforeUpgrade(t *testing.T) {
	t.Parallel()
	// TestFixOnSeedState covers the affected releases
	onEachRelease(t, fixedRelease, func(t *testing.T, e *env, rel string) {
		vol := "vol-upgraded"
		old, mig, out := e.fixStuckBeforeUpgrade(vol, nil)
		if strings.Contains(out, `"`+mig+`" deactivated`) || !strings.Contains(out, `engine.longhorn.io "`+old+`" deactivated`) {
			t.Errorf("fix did not deactivate exactly the stale engine %s:\n%s", old, out)
		}
		v, es, rs := e.state(vol)
		if !settled(nodeB)(v, es, rs) {
			t.Errorf("fix exited 0 before Longhorn %s converged:\n%s", rel, lhsim.Describe(v, es, rs))
		}
		e.assertNoDamage(vol)
	})
}

// assertNoDamage: no replica deleted while active, no directory the
// survivor's replicas use wiped, no data lost.
func (e *env) assertNoDamage(vol string) {
	e.t.Helper()
	if l := e.activeDeleted(); len(l) > 0 {
		e.t.Errorf("replicas deleted while active: %v", l)
	}
	_, _, rs := e.state(vol)
	wiped := e.sim.WipedDirs(vol)
	for _, r := range rs {
		for _, w := range wiped {
			if strings.HasSuffix(w, "/"+r.Spec.DataDirectoryName) && strings.HasPrefix(w, r.Spec.NodeID+":") {
				e.t.Errorf("the survivor's replica %s uses wiped directory %s", r.Name, w)
			}
		}
	}
	if lost, err := e.sim.DataLost(e.ctx, vol); err != nil || lost {
		e.t.Errorf("data lost: %v %v (wiped %v)", lost, err, wiped)
	}
}

// assertNoDamageAfterNodeDown is assertNoDamage for a scenario that took
// node down: Longhorn may then remove the replica that failed there,
// wiping its directory, as longhorn-tests expect (the volume ends
// degraded, its data intact). Every wiped directory must be on that node
// and used by no replica left, no replica was deleted while active, and an
// intact running replica still serves the volume.
func (e *env) assertNoDamageAfterNodeDown(vol, node string) {
	e.t.Helper()
	if l := e.activeDeleted(); len(l) > 0 {
		e.t.Errorf("replicas deleted while active: %v", l)
	}
	_, es, rs := e.state(vol)
	wiped := e.sim.WipedDirs(vol)
	usesWiped := func(r longhorn.Replica) bool {
		for _, w := range wiped {
			if strings.HasSuffix(w, "/"+r.Spec.DataDirectoryName) && strings.HasPrefix(w, r.Spec.NodeID+":") {
				return true
			}
		}
		return false
	}
	for _, w := range wiped {
		if !strings.HasPrefix(w, node+":") {
			e.t.Errorf("directory %s wiped, not on %s, the node that was down", w, node)
		}
	}
	served := false
	for _, r := range rs {
		if usesWiped(r) {
			e.t.Errorf("replica %s uses a wiped directory", r.Name)
		}
		for _, en := range es {
			if en.Spec.Active && en.DeletionTimestamp == nil && r.Spec.EngineName == en.Name && r.DeletionTimestamp == nil &&
				r.Spec.DataDirectoryName != "" && r.Status.CurrentState == longhorn.StateRunning && !usesWiped(r) {
				served = true
			}
		}
	}
	if !served {
		e.t.Errorf("no intact running replica serves volume %s (wiped %v)", vol, wiped)
	}
	if len(wiped) > 0 {
		e.t.Logf("Longhorn removed the replica that failed on %s while it was down: %v", node, wiped)
	}
}

// fixStuckBeforeUpgrade leaves vol stuck before an upgrade, runs before
// (when set) with the stale engine's name, then fix, which must exit 0; it
// returns the engines and fix's stdout.
func (e *env) fixStuckBeforeUpgrade(vol string, before func(old string)) (old, mig, out string) {
	e.t.Helper()
	old, mig = e.stuckBeforeUpgrade(vol)
	e.waitRepairable(vol)
	if before != nil {
		before(old)
	}
	out, errOut, code := e.plugin("fix", vol, "--yes", "--backup-dir", e.t.TempDir())
	expectExit(e.t, "fix", 0, out, errOut, code)
	return old, mig, out
}
