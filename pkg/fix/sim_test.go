package fix_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Simulator tests run in namespaces of their own, in parallel with each
// other and after the sequential tests that reset the whole cluster.

// simWait bounds each wait on the simulator; a run needs well under a second.
const simWait = 60 * time.Second

type simEnv struct{ *testenv.Env }

func newSim(t *testing.T, version string) *simEnv {
	t.Helper()
	// make test-releases records the repairs shown on lhsim, for the
	// releases that cannot be run (docs/support-matrix.md)
	testenv.RecordScenario(t, version, false)
	return &simEnv{testenv.StartSim(t, cluster.RESTConfig(), testenv.Namespace("fix-sim"), version, 4*time.Minute, simWait)}
}

// fix runs `fix args...` with the hooks h in the simulator's namespace.
func (e *simEnv) fix(h fix.Hooks, args ...string) clitest.Result {
	return cli(e.T, cluster.KubeconfigPath(), h).Run(e.Ctx, append([]string{"fix", "-n", e.NS}, args...)...)
}

// produceBug is the seed sequence: attach on node-a, migrate to node-b,
// confirm while the old engine's delete fails. The fault is then cleared:
// the state stays stuck because every later sync stops at the BUG error.
func (e *simEnv) produceBug(vol string) (old, mig string) {
	e.T.Helper()
	e.CreateAttached(vol)
	old, mig = e.StartMigration(vol)
	if !e.Sim.Version().Affected() {
		e.writeStuckConfirm(vol, mig)
	} else {
		fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.FailEngineDelete, Volume: vol, Engine: lhsim.RoleOld})
		if err := e.Sim.Detach(e.Ctx, vol, testenv.NodeA); err != nil {
			e.T.Fatal(err)
		}
		defer e.Sim.ClearFault(fid)
	}
	e.WaitStuck(vol)
	return old, mig
}

// writeStuckConfirm leaves, on a fixed release, what a failed confirm on an
// affected one saved before the upgrade (the volume stuck on 1.4.3, then
// upgraded): the confirm requested, the migration engine active, the
// volume's current node moved, no currentMigrationNodeID (1.4 has none),
// while the volume controller is held so that it cannot finish the confirm.
func (e *simEnv) writeStuckConfirm(vol, mig string) {
	e.T.Helper()
	hold := e.Sim.Inject(lhsim.Fault{Kind: lhsim.HoldVolumeSync, Volume: vol})
	defer e.Sim.ClearFault(hold)
	if err := e.Sim.Detach(e.Ctx, vol, testenv.NodeA); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("confirm requested", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Spec.NodeID == testenv.NodeB && v.Spec.MigrationNodeID == ""
	})
	e.JSONPatch(longhorn.Engines, mig, `[{"op":"replace","path":"/spec/active","value":true}]`)
	e.MergePatch(longhorn.Volumes, vol, `{"status":{"currentNodeID":"`+testenv.NodeB+`","currentMigrationNodeID":""}}`, "status")
}

// On each affected generation, fix repairs the state the simulator's seed
// sequence produces; the simulator's controller then finishes cleanly (one
// engine, replicas flipped, no data lost, no more sync errors), and a second
// run is a no-op.
func TestFixRepairsTheSeedBug(t *testing.T) {
	for _, tc := range []struct{ version, strategy, verb string }{
		{"v1.3.3", "auto", "deactivated"},
		{"v1.4.3", "auto", "deactivated"},
		{"v1.5.1", "auto", "deleted"},
		{"v1.5.1", "deactivate", "deactivated"},
	} {
		t.Run(tc.version+"/"+tc.strategy, func(t *testing.T) {
			t.Parallel()
			e := newSim(t, tc.version)
			vol := "vol-bug"
			old, mig := e.produceBug(vol)
			dir := filepath.Join(t.TempDir(), "backup")

			res := e.fix(fix.Hooks{}, vol, "--yes", "--strategy", tc.strategy, "--backup-dir", dir, "--timeout", "60s")
			if res.Code != cmdutil.ExitOK {
				t.Fatalf("exit %d", res.Code)
			}
			testenv.Contains(t, "stdout", res.Stdout,
				`engine.longhorn.io "`+old+`" `+tc.verb+"\n",
				`volume.longhorn.io "vol-bug" repaired: verified: 1 engine(s): `+mig)
			testenv.Contains(t, "stderr", res.Stderr, `waiting for volume "vol-bug"`, "; engines: ", "Summary: 1 volume(s): 1 repaired")
			if strings.Contains(res.Stdout, `"`+mig+`" `+tc.verb) {
				t.Errorf("the survivor %s was written", mig)
			}

			e.ExpectConverged(vol, testenv.NodeB, mig)

			// Idempotent: a second run finds nothing to do and writes nothing.
			dir2 := filepath.Join(t.TempDir(), "again")
			_, es0, _ := e.State(vol)
			again := e.fix(fix.Hooks{}, vol, "--yes", "--backup-dir", dir2)
			if again.Code != cmdutil.ExitOK || !strings.Contains(again.Stdout, `volume.longhorn.io "vol-bug" healthy: nothing to do`) {
				t.Errorf("second run: %s", again)
			}
			noFile(t, dir2)
			all := e.fix(fix.Hooks{}, "--all", "--yes", "--backup-dir", dir2)
			if all.Code != cmdutil.ExitOK || strings.Contains(all.Stdout, "deactivated") || strings.Contains(all.Stdout, "deleted") {
				t.Errorf("--all after the repair: %s", all)
			}
			_, es1, _ := e.State(vol)
			if len(es1) != 1 || es1[0].UID != es0[0].UID || es1[0].Spec.Active != true {
				t.Errorf("survivor changed by the re-runs: %+v", es1)
			}
		})
	}
}

// When Longhorn itself moves the volume between the plan and the act, fix
// skips it and writes nothing.
func TestFixSkipsWhenTheSimulatorMovesTheVolume(t *testing.T) {
	testenv.PerRelease(t, []string{"v1.4.3", "v1.5.1"}, func(t *testing.T, version string) {
		e := newSim(t, version)
		vol := "vol-moving"
		old, _ := e.produceBug(vol)
		v0, _, _ := e.State(vol)
		// Unstick Longhorn behind fix's back: someone deactivated the old
		// engine already, and Longhorn finishes the confirm.
		hook := func() {
			_, err := cluster.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(e.NS).Patch(e.Ctx, old, "application/json-patch+json",
				[]byte(`[{"op":"replace","path":"/spec/active","value":false}]`), metav1.PatchOptions{})
			if err != nil {
				t.Error(err)
			}
			e.WaitFor("Longhorn moved on", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
				return v.ResourceVersion != v0.ResourceVersion || len(es) == 1
			})
		}
		res := e.fix(fix.Hooks{AfterPlan: hook}, vol, "--yes", "--backup-dir", t.TempDir())
		if res.Code != cmdutil.ExitNeedsAction {
			t.Errorf("exit %d", res.Code)
		}
		testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol-moving" skipped: skipped, nothing written: `)
		if strings.Contains(res.Stdout, "deactivated\n") || strings.Contains(res.Stdout, "deleted\n") {
			t.Error("fix wrote after the volume moved")
		}
		e.WaitFor("Longhorn finished on its own", vol, testenv.Settled(testenv.NodeB))
	})
}

// A verification that cannot finish (the old engine's finalizer never goes)
// times out with the last state and exit 1; the change is recorded.
func TestFixTimesOutWhenLonghornCannotFinish(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.5.1")
	vol := "vol-stuck"
	old, _ := e.produceBug(vol)
	e.Sim.Inject(lhsim.Fault{Kind: lhsim.FinalizerStuck, Volume: vol, Engine: old})
	dir := filepath.Join(t.TempDir(), "backup")
	res := e.fix(fix.Hooks{}, vol, "--yes", "--backup-dir", dir, "--timeout", "2s")
	if res.Code != cmdutil.ExitNeedsAction {
		t.Errorf("exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, `engine.longhorn.io "`+old+`" deleted`, `volume.longhorn.io "vol-stuck" timed-out: not verified within 2s`)
	testenv.Contains(t, "actions.log", readFile(t, filepath.Join(dir, fix.ActionLogName)), "delete engine="+old+" ok", "verify volume=vol-stuck timeout")
}

// --all with --parallel repairs every affected volume at once and leaves
// healthy ones alone.
func TestFixAllInParallel(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.4.3")
	_, mig1 := e.produceBug("vol-1")
	_, mig2 := e.produceBug("vol-2")
	if err := e.Sim.CreateVolume(e.Ctx, "vol-3", lhsim.VolumeOptions{Migratable: true, ReplicaNodes: []string{testenv.NodeA, testenv.NodeB}}); err != nil {
		t.Fatal(err)
	}
	e.WaitFor("vol-3 created", "vol-3", func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Status.State == longhorn.VolumeStateDetached && len(es) == 1
	})
	if err := e.Sim.Attach(e.Ctx, "vol-3", testenv.NodeA); err != nil {
		t.Fatal(err)
	}
	e.WaitFor("vol-3 attached", "vol-3", testenv.Settled(testenv.NodeA))

	res := e.fix(fix.Hooks{}, "--all", "--yes", "--parallel", "2", "--backup-dir", t.TempDir(), "--timeout", "60s")
	if res.Code != cmdutil.ExitOK {
		t.Fatalf("exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout,
		`volume.longhorn.io "vol-1" repaired: verified: 1 engine(s): `+mig1,
		`volume.longhorn.io "vol-2" repaired: verified: 1 engine(s): `+mig2,
		`volume.longhorn.io "vol-3" healthy: nothing to do`)
	testenv.Contains(t, "stderr", res.Stderr, "Summary: 3 volume(s): 1 healthy, 2 repaired",
		"1/2 volumes done", "2/2 volumes done")
	if strings.Contains(res.Stdout, "volumes done") || strings.Contains(res.Stdout, "waiting for volume") {
		t.Errorf("progress on stdout:\n%s", res.Stdout)
	}
	e.WaitFor("vol-1 settled", "vol-1", testenv.Settled(testenv.NodeB))
	e.WaitFor("vol-2 settled", "vol-2", testenv.Settled(testenv.NodeB))
	e.WaitFor("vol-3 untouched", "vol-3", testenv.Settled(testenv.NodeA))
}
