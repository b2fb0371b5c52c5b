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
	t.Parallel()
	testenv.PerRelease(t, releasesOrSkip(t), func(t *testing.T, rel string) {
		e := newEnv(t, rel)
		vol := "vol-conflict"
		e.readyToConfirm(vol)
		_, es, rs := e.state(vol)
		old := testenv.EngineOn(es, nodeA)
		if old == nil {
			t.Fatalf("no engine on node-a:\n%s", lhsim.Describe(nil, es, rs))
		}
		var ids []int
		var oldReplicas []string
		for _, r := range rs {
			if r.Spec.EngineName != old.Name {
				continue
			}
			oldReplicas = append(oldReplicas, r.Name)
			id, err := e.lh.InjectFault(lhreal.Fault{Verb: "update", Resource: "replicas", Name: r.Name, Count: 1, Code: 409})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if len(oldReplicas) == 0 {
			t.Fatalf("the old engine %s has no replicas", old.Name)
		}
		if err := e.sim.Detach(e.ctx, vol, nodeA); err != nil {
			t.Fatal(err)
		}
		e.await("a conflict answered for an old replica", func() bool {
			return slices.ContainsFunc(ids, func(id int) bool { return e.lh.FaultHits(id) > 0 })
		})
		wipes := longhorn.MustParseVersion(rel).ReplicaDeleteIgnoresConflict()
		if wipes {
			// 1.12.0: the old replicas are deleted at once; the one whose
			// write conflicted is deleted while stored active.
			e.await("an old replica deleted while active", func() bool { return len(e.activeDeleted()) > 0 })
			deleted := e.activeDeleted()
			wiped := e.sim.WipedDirs(vol)
			t.Logf("OUTCOME | confirm with a conflict on the clean-up | %s | replicas deleted while active %v, wiped %v", rel, deleted, wiped)
			if len(wiped) == 0 {
				t.Errorf("Longhorn %s deleted %v while active but wiped no directory", rel, deleted)
			}
			return
		}
		e.waitFor("settled on node-b", vol, settled(nodeB))
		v, es, rs := e.state(vol)
		t.Logf("OUTCOME | confirm with a conflict on the clean-up | %s | %s", rel, lhsim.Describe(v, es, rs))
		e.assertNoDamage(vol)
	})
}
