package realtest

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// TestMigrateDegradedOnLonghorn: longhorn-tests' "Volume Degraded
// Before/Between Migration And Confirmation/Rollback". A volume of three
// replicas on three nodes loses the one on node-c (the suite cordons node 2
// and deletes its instance manager; here node-c goes down, which leaves the
// replica failed and nowhere to rebuild it), either after the migration to
// node-b is ready or before the volume is created. migrate confirms or rolls
// back as asked and the volume ends on the node asked for, degraded, with
// nothing lost (the suite: "wait for volume degraded", data intact).
//
// One env per release: the "between" volumes are made ready while node-c is
// up, then node-c goes down for the rest of the test.
func TestMigrateDegradedOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		// between: ready to confirm with three healthy replicas, then node-c goes down
		for _, vol := range []string{"vol-deg-between-c", "vol-deg-between-r"} {
			e.attachedWith(vol, 3)
			out, errOut, code := e.migrate(vol, "--to", nodeB, "--yes", poll)
			expectExit(t, "migrate (no --confirm) "+vol, 0, out, errOut, code)
		}
		if err := e.setNodeReady(nodeC, false); err != nil {
			t.Fatal(err)
		}
		for _, vol := range []string{"vol-deg-between-c", "vol-deg-between-r"} {
			e.waitFor("degraded by node-c", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
				return v.Status.Robustness == longhorn.RobustnessDegraded
			})
		}
		e.degradedEnd("Volume Degraded Between Migration And Confirmation", "vol-deg-between-c", nodeB, "confirm", "vol-deg-between-c")
		e.degradedEnd("Volume Degraded Between Migration And Rollback", "vol-deg-between-r", nodeA, "rollback", "vol-deg-between-r")

		// before: node-c is down when the volume is created, so its third
		// replica is never scheduled
		for _, vol := range []string{"vol-deg-before-c", "vol-deg-before-r"} {
			e.attachedWith(vol, 3)
			e.waitFor("degraded from the start", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
				return v.Status.Robustness == longhorn.RobustnessDegraded
			})
		}
		e.degradedEnd("Volume Degraded Before Migration And Confirmation", "vol-deg-before-c", nodeB, "vol-deg-before-c", "--to", nodeB, "--confirm")
		out, errOut, code := e.migrate("vol-deg-before-r", "--to", nodeB, "--yes", poll)
		expectExit(t, "migrate (no --confirm) vol-deg-before-r", 0, out, errOut, code)
		e.degradedEnd("Volume Degraded Before Migration And Rollback", "vol-deg-before-r", nodeA, "rollback", "vol-deg-before-r")
	})
}

// degradedEnd runs `migrate args...` (a confirm or a rollback of vol),
// expects exit 0, and checks that the volume ends attached
// on node with one running engine, degraded, with no active replica
// deleted and no directory in use wiped.
func (e *env) degradedEnd(scenario, vol, node string, args ...string) {
	e.t.Helper()
	out, errOut, code := e.migrate(append(args, "--yes", "--timeout=3m", poll)...)
	v, es, rs := e.state(vol)
	e.outcome(scenario, safetext.OneLine(lhsim.Describe(v, es, rs)), "migrate "+strings.Join(args, " "), code, errOut)
	expectExit(e.t, scenario, 0, out, errOut, code)
	e.waitFor("degraded on "+node, vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
		en := testenv.EngineOn(es, node)
		return len(es) == 1 && en != nil && en.Spec.Active && en.Status.CurrentState == longhorn.StateRunning &&
			v.Spec.MigrationNodeID == "" && v.Status.CurrentNodeID == node && v.Status.State == longhorn.VolumeStateAttached &&
			v.Status.Robustness == longhorn.RobustnessDegraded
	})
	e.assertNoDamageAfterNodeDown(vol, nodeC)
}
