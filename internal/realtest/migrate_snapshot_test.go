package realtest

import (
	"slices"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// TestMigrateSnapshotDuringMigrationOnLonghorn: a snapshot taken through the
// serving engine once the migration is ready, which the migration engine
// does not list yet (lhsim's SnapshotNotSynced). Longhorn 1.5+ does not
// confirm until both engines list the same snapshots; 1.4 does not look.
// migrate confirm waits for the same rule on every release: with the
// migration engine lagging it writes nothing and says so (exit 3, the
// volume still served from node-a); once the lists agree, it confirms and
// the snapshot is on the engine that serves the volume.
func TestMigrateSnapshotDuringMigrationOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		vol := "vol-snap"
		e.readyToConfirm(vol)
		lag := e.sim.Inject(lhsim.Fault{Kind: lhsim.SnapshotNotSynced, Volume: vol, Engine: lhsim.RoleNew})
		if err := e.sim.TakeSnapshot(e.ctx, vol, "snap-1"); err != nil {
			t.Fatal(err)
		}
		listed := func(node string) bool {
			_, es, _ := e.state(vol)
			eng := testenv.EngineOn(es, node)
			return eng != nil && slices.Contains(eng.SnapshotNames(), "snap-1")
		}
		e.await("snap-1 listed by the serving engine only", func() bool {
			return listed(nodeA) && !listed(nodeB) && e.sim.FaultHits(lag) > 0
		})

		out, errOut, code := e.migrate("confirm", vol, "--yes", "--timeout=3s", poll)
		expectExit(t, "migrate confirm while the snapshots differ", cmdutil.ExitNeedsAction, out, errOut, code)
		if !strings.Contains(errOut, "nothing was changed") || !strings.Contains(errOut, "snapshots not in sync") {
			t.Errorf("the refusal does not say the snapshots differ and nothing changed:\n%s", errOut)
		}
		v, _, _ := e.state(vol)
		if v.Spec.NodeID != nodeA || v.Spec.MigrationNodeID != nodeB {
			t.Errorf("the migration moved although migrate did not confirm: spec.nodeID %q migrationNodeID %q", v.Spec.NodeID, v.Spec.MigrationNodeID)
		}
		if longhorn.MustParseVersion(rel).HasVolumeAttachments() && !slices.Contains(e.csiTicketsOn(vol), nodeA) {
			t.Errorf("node-a's csi ticket was removed although migrate did not confirm")
		}

		e.sim.ClearFault(lag)
		out, errOut, code = e.migrate("confirm", vol, "--yes", poll)
		expectExit(t, "migrate confirm once the snapshots agree", 0, out, errOut, code)
		e.waitFor("settled on node-b", vol, settled(nodeB))
		if !listed(nodeB) {
			t.Errorf("the engine serving the volume on node-b does not list snap-1")
		}
		v, es, rs := e.state(vol)
		e.outcome("snapshot taken during the migration", safetext.OneLine(lhsim.Describe(v, es, rs)), "migrate confirm (lagging, then synced)", code, errOut)
		e.assertNoDamage(vol)
	})
}
