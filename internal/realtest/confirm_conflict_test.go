package realtest

import (
	"slices"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TestConfirmCleanupConflictOnLonghorn: a migration confirmed as CSI does
// (node-a's ticket removed), with the first update the controllers send
// for each of the old engine's replicas answered 409 Conflict, as a stale
// informer cache makes it answered on a busy cluster.
//
// The confirm's clean-up sets the old replicas inactive in memory and
// removes them in the same sync. Longhorn's deleteReplica writes the
// replica before deleting it; up to 1.11 a failed write stops the sync,
// which is retried. 1.12.0 deletes the replica even when that write
// conflicted, so the replica is deleted while stored active, and deleting
// an active replica removes its data directory: the one the new engine's
// replica on that node uses (the migration clones each directory).
//
// The test pins what each release does: the rule
// longhorn.Version.ReplicaDeleteIgnoresConflict, and why migrate refuses to
// confirm on 1.12 without --force.
func TestConfirmCleanupConflictOnLonghorn(t *testing.T) {
	cleanupUnderConflict(t, "confirm", "vol-conflict", nodeA, nodeB, longhorn.Version.ReplicaDeleteIgnoresConflict)
}

// TestRollbackCleanupConflictOnLonghorn: the rollback's clean-up under the
// same conflict, on the migration engine's replicas. They were created
// inactive and each shares its directory with an old replica, so deleting
// them removes no directory on any release, 1.12.0 included: the rollback is
// the way out migrate status offers on 1.12.
func TestRollbackCleanupConflictOnLonghorn(t *testing.T) {
	cleanupUnderConflict(t, "rollback", "vol-rb-conflict", nodeB, nodeA, func(longhorn.Version) bool { return false })
}

// cleanupUnderConflict makes a migration of vol ready, answers 409 to the
// controllers' next write of each replica of the engine on the node the
// CSI driver then detaches (from), and expects the directories wiped where
// wipes says so, else the volume settled on the other node (to) unharmed.
func cleanupUnderConflict(t *testing.T, what, vol, from, to string, wipes func(longhorn.Version) bool) {
	t.Parallel()
	testenv.PerRelease(t, releasesOrSkip(t), func(t *testing.T, rel string) {
		e := newEnv(t, rel)
		e.readyToConfirm(vol)
		_, es, _ := e.state(vol)
		ids := e.conflictOnReplicasOf(vol, testenv.EngineOn(es, from).Name)
		if err := e.sim.Detach(e.ctx, vol, from); err != nil {
			t.Fatal(err)
		}
		e.expectCleanupUnderConflict(what+" with a conflict on the clean-up", vol, ids, to, wipes(longhorn.MustParseVersion(rel)))
	})
}

// TestFixUnderConflictOnLonghorn: fix's repair of a volume stuck before an
// upgrade (TestFixStuckBeforeUpgrade), with the first update the
// controllers send for each of the stale engine's replicas answered 409.
// Longhorn finishes the repair as it finishes a confirm and meets the same
// conflict, but fix stored the stale engine's replicas inactive before it
// deactivated the engine, so on 1.12.0 too nothing is wiped.
func TestFixUnderConflictOnLonghorn(t *testing.T) {
	t.Parallel()
	onEachRelease(t, fixedRelease, func(t *testing.T, e *env, rel string) {
		vol := "vol-fix-conflict"
		var ids []int
		e.fixStuckBeforeUpgrade(vol, func(old string) { ids = e.conflictOnReplicasOf(vol, old) })
		e.expectCleanupUnderConflict("fix with a conflict on the clean-up", vol, ids, nodeB, false)
	})
}

// conflictOnReplicasOf answers the controllers' next update of each replica
// of engine 409 Conflict, once; it returns the faults' ids.
func (e *env) conflictOnReplicasOf(vol, engine string) []int {
	e.t.Helper()
	_, _, rs := e.state(vol)
	var ids []int
	for _, r := range rs {
		if r.Spec.EngineName != engine {
			continue
		}
		id, err := e.lh.InjectFault(lhreal.Fault{Verb: "update", Resource: "replicas", Name: r.Name, Count: 1, Code: 409})
		if err != nil {
			e.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		e.t.Fatalf("engine %s has no replicas", engine)
	}
	return ids
}

// expectCleanupUnderConflict waits until a conflict was answered, then for
// the outcome: wiped (a replica deleted while stored active, its directory
// removed), or the volume settled on node `on` unharmed.
func (e *env) expectCleanupUnderConflict(scenario, vol string, ids []int, on string, wiped bool) {
	e.t.Helper()
	e.await("a conflict answered", func() bool {
		return slices.ContainsFunc(ids, func(id int) bool { return e.lh.FaultHits(id) > 0 })
	})
	if wiped {
		e.await("an old replica deleted while active", func() bool { return len(e.activeDeleted()) > 0 })
		// the watch sees the deletion before lhsim's replica clean-up
		// removes the directory: wait for that too, not on it having run
		e.await("its directory wiped", func() bool { return len(e.sim.WipedDirs(vol)) > 0 })
		e.t.Logf("OUTCOME | %s | %s | replicas deleted while active %v, wiped %v", scenario, e.release, e.activeDeleted(), e.sim.WipedDirs(vol))
		return
	}
	e.waitFor("settled on "+on, vol, settled(on))
	v, es, rs := e.state(vol)
	e.t.Logf("OUTCOME | %s | %s | %s", scenario, e.release, lhsim.Describe(v, es, rs))
	e.assertNoDamage(vol)
}
