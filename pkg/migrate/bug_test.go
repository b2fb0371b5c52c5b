package migrate_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// TestConfirmLeavesTwoActiveEngines is the seed's bug through the command:
// on affected releases the old engine's delete fails during the confirm and
// two engines stay active (longhorn#6642). The command must say so, name
// the exact fix command, exit 3, and touch no engine itself.
func TestConfirmLeavesTwoActiveEngines(t *testing.T) {
	t.Parallel()
	const vol = "vol-bug"
	attachedEach(t, []string{"v1.4.3", "v1.5.1"}, vol, func(t *testing.T, e *env, version string) {
		fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.FailEngineDelete, Volume: vol, Engine: lhsim.RoleOld, Times: 1})

		res := e.run("migrate", vol, "--to", nodeB, "--confirm", "--yes", poll)
		expectCode(t, res, cmdutil.ExitAttention)
		expectContains(t, "stderr", res.Stderr, "Confirmed:", "MultipleActiveEngines",
			"has two active engines after the confirm (longhorn#6642)",
			"kubectl longhorn-engines fix "+vol+" -n "+e.NS)
		expectNotContains(t, "stderr", res.Stderr, "Verified:", "Rolling back")
		if e.Sim.FaultHits(fid) != 1 {
			t.Errorf("FailEngineDelete fired %d times, want 1", e.Sim.FaultHits(fid))
		}
		v, es, rs := e.State(vol)
		active := 0
		for _, en := range es {
			if en.IsActive() {
				active++
			}
		}
		if active != 2 || v.Status.CurrentNodeID != nodeB {
			t.Errorf("want the #6642 state left for fix to repair:\n%s", lhsim.Describe(v, es, rs))
		}
		e.ExpectNoDataLoss(vol)
		st := e.run("migrate", "status", vol)
		expectCode(t, st, 0)
		expectContains(t, "status", st.Stdout, "Phase:      NeedsAttention", "longhorn-engines fix "+vol)
	})
}

// TestConfirmLeavesTwoActiveEnginesFixed: with --fix the same state is
// repaired by fix's pipeline (deactivate on 1.4, delete on 1.5.0/1.5.1),
// backed up first, and the migration ends verified on node-b.
func TestConfirmLeavesTwoActiveEnginesFixed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ version, verb string }{{"v1.4.3", "deactivated"}, {"v1.5.1", "deleted"}} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.version)
			vol := "vol-fix"
			e.createAttached(lhsim.VolumeOptions{Migratable: true}, vol)
			_, es, _ := e.State(vol)
			old := es[0].Name
			e.Sim.Inject(lhsim.Fault{Kind: lhsim.FailEngineDelete, Volume: vol, Engine: lhsim.RoleOld, Times: 1})
			backups := t.TempDir()

			res := e.run("migrate", vol, "--to", nodeB, "--confirm", "--fix", "--backup-dir", backups, "--yes", poll)
			expectCode(t, res, 0)
			expectContains(t, "stderr", res.Stderr, "has two active engines after the confirm (longhorn#6642)", "Repaired by fix:", "Verified:")
			expectContains(t, "stdout", res.Stdout, fmt.Sprintf("engine.longhorn.io %q %s", old, tc.verb),
				fmt.Sprintf("volume.longhorn.io %q migrated to node-b", vol))
			e.expectSettled(vol, nodeB)
			files, err := os.ReadDir(backups)
			if err != nil || len(files) < 2 {
				t.Errorf("backup folder holds %v (%v), want the volume's objects and the action log", files, err)
			}
		})
	}
}
