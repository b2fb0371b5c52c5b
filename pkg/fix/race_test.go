package fix_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

const nodeC = "node-c"

// requestMigration lands a migration request to node-c on vol while the
// volume controller is held, so that Longhorn's next sync sees it: a drain's
// CSI attach (spec.migrationNodeID up to 1.4, a second csi ticket from 1.5).
func (e *simEnv) requestMigration(vol string) {
	e.T.Helper()
	hold := e.Sim.Inject(lhsim.Fault{Kind: lhsim.HoldVolumeSync, Volume: vol})
	defer e.Sim.ClearFault(hold)
	if err := e.Sim.Attach(e.Ctx, vol, nodeC); err != nil {
		if e.Sim.Version().HasVolumeAttachments() {
			e.T.Fatal(err)
		}
		// The REST API's checks refused; any client can still set the field.
		e.T.Logf("attach refused (%v): setting spec.migrationNodeID", err)
		e.MergePatch(longhorn.Volumes, vol, `{"spec":{"migrationNodeID":"`+nodeC+`"}}`)
	}
	// From 1.5 the VolumeAttachment controller turns the ticket into
	// spec.migrationNodeID only once its start conditions hold (never while
	// status.currentMigrationNodeID is set, as on a stuck 1.5.0/1.5.1
	// volume): the ticket stays, and the request lands whenever they do.
}

// With the old order (the stale engine deactivated while its replicas are
// still active), a migration request before Longhorn's next sync makes the
// revert delete those active replicas and wipe the directories the
// survivor's replicas share: what Longhorn 1.4.3's own controller did.
// lhsim must agree, or the tests below prove nothing.
func TestOldOrderMigrationRequestWipes(t *testing.T) {
	testenv.PerRelease(t, []string{"v1.4.3", "v1.5.3"}, func(t *testing.T, version string) {
		e := newSim(t, version)
		if err := e.Sim.AddNode(e.Ctx, nodeC, lhsim.NodeOptions{}); err != nil {
			t.Fatal(err)
		}
		vol := "vol-old-order"
		old, _ := e.produceBug(vol)
		hold := e.Sim.Inject(lhsim.Fault{Kind: lhsim.HoldVolumeSync, Volume: vol})
		e.JSONPatch(longhorn.Engines, old, `[{"op":"replace","path":"/spec/active","value":false}]`)
		// The request must land before Longhorn's next sync: released
		// first, a sync could finish the confirm before it (a flake
		// seen under load).
		e.requestMigration(vol)
		e.WaitFor("migration requested", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
			return v.Spec.MigrationNodeID == nodeC
		})
		e.Sim.ClearFault(hold)
		e.Await("data wiped", func() bool { return len(e.Sim.WipedDirs(vol)) > 0 })
	})
}

// A migration request landing after fix's plan or after any of its writes,
// before Longhorn's next sync, wipes nothing: the replica flags are right
// before the stale engine is deactivated, and a request seen before the
// engine write is one Longhorn has not started, which waits on the repair.
// After the request is rolled back, a second run (where needed) converges.
//
// Not parallel: the write hooks are process-wide, and sequential tests run
// while no parallel test does.
func TestMigrationRequestRacingTheRepair(t *testing.T) {
	type point struct {
		name  string
		after int // -1: after the plan; k: after write k (0-based); -2: after the last write
	}
	plan, first, lastReplica, engine := point{"plan", -1}, point{"first-write", 0}, point{"last-replica-write", 3}, point{"engine-write", -2}
	cases := map[string][]point{
		"v1.4.3":  {plan, first, lastReplica, engine},
		"v1.5.1":  {first, engine},
		"v1.3.3":  {engine},
		"v1.5.3":  {engine},
		"v1.10.0": {first, engine},
	}
	for _, version := range []string{"v1.3.3", "v1.4.3", "v1.5.1", "v1.5.3", "v1.10.0"} {
		for _, p := range cases[version] {
			t.Run(version+"/"+p.name, func(t *testing.T) {
				e := newSim(t, version)
				if err := e.Sim.AddNode(e.Ctx, nodeC, lhsim.NodeOptions{}); err != nil {
					t.Fatal(err)
				}
				vol := "vol-race"
				old, mig := e.produceBug(vol)
				_, _, rs := e.State(vol)
				writes := len(rs) + 1 // every replica flag is wrong, then the engine
				fired := false
				n := 0
				land := func() {
					if !fired {
						fired = true
						e.requestMigration(vol)
					}
				}
				var h fix.Hooks
				if p.after == -1 {
					h.AfterPlan = land
				} else {
					h.AfterWrite = func(string) {
						if n == p.after || (p.after == -2 && n == writes-1) {
							land()
						}
						n++
					}
				}
				res := e.fix(h, vol, "--yes", "--backup-dir", filepath.Join(t.TempDir(), "backup"), "--timeout", "3s")
				if !fired {
					t.Fatalf("the migration request never landed (%d writes): %s", n, res)
				}
				// Up to 1.4 the request is spec.migrationNodeID itself, so fix
				// sees it; from 1.5 a ticket becomes one only when the
				// VolumeAttachment controller starts the migration. Seen
				// after the plan, the volume changed and is skipped. Seen
				// between the writes, at the re-read before the engine's, it
				// is a request Longhorn has not started: it waits on the
				// repair, which ends verified with Longhorn running the
				// migration (E6). After the last write it is a migration
				// fix did not plan for: superseded.
				if !e.Sim.Version().HasVolumeAttachments() {
					// an action line starts a line; the plan lists the same names indented
					wroteStale := strings.Contains(res.Stdout, "\n"+`engine.longhorn.io "`+old+`" `)
					switch p.after {
					case -1:
						if res.Code == cmdutil.ExitOK || wroteStale {
							t.Errorf("request after the plan: exit %d, stale engine written %t: %s", res.Code, wroteStale, res)
						}
					case -2:
						if res.Code == cmdutil.ExitOK || !strings.Contains(res.Stdout, "superseded") {
							t.Errorf("request after the last write: want superseded: %s", res)
						}
					default:
						if res.Code != cmdutil.ExitOK || !wroteStale || !strings.Contains(res.Stdout, "runs the migration to "+nodeC) {
							t.Errorf("request between the writes: want the repair verified with the migration running: %s", res)
						}
					}
				}
				e.ExpectNoDataLoss(vol)

				// Roll the request back (the drain gives up) and finish.
				if err := e.Sim.Detach(e.Ctx, vol, nodeC); err != nil {
					t.Logf("detach node-c: %v", err)
					e.MergePatch(longhorn.Volumes, vol, `{"spec":{"migrationNodeID":""}}`)
				}
				e.WaitFor("request rolled back", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
					return v.Spec.MigrationNodeID != nodeC
				})
				if p.after != -2 {
					again := e.fix(fix.Hooks{}, vol, "--yes", "--backup-dir", filepath.Join(t.TempDir(), "again"), "--timeout", "60s")
					if again.Code != cmdutil.ExitOK {
						t.Fatalf("second run: exit %d", again.Code)
					}
				}
				e.WaitFor("testenv.Settled on node-b", vol, testenv.Settled(testenv.NodeB))
				_, es, _ := e.State(vol)
				if len(es) != 1 || es[0].Name != mig {
					t.Errorf("engines %v, want only %s", engineNames(es), mig)
				}
				e.ExpectNoDataLoss(vol)
			})
		}
	}
}

func engineNames(es []longhorn.Engine) string {
	out := make([]string, len(es))
	for i := range es {
		out[i] = fmt.Sprintf("%s@%s", es[i].Name, es[i].Spec.NodeID)
	}
	return strings.Join(out, ",")
}

// The documented delete applied by hand on 1.3/1.4: Longhorn removes the
// survivor's inactive replicas, the old replicas stay active for the
// deleted engine and every sync fails. fix points them at the remaining
// engine; Longhorn then runs it with them and nothing is wiped.
func TestFixRepairsTheHandDeletedEngine(t *testing.T) {
	testenv.PerRelease(t, []string{"v1.3.3", "v1.4.3"}, func(t *testing.T, version string) {
		e := newSim(t, version)
		vol := "vol-kb"
		old, mig := e.produceBug(vol)
		e.Delete(longhorn.Engines, old)
		e.WaitFor("survivor's replicas cleaned up, old ones dangling", vol, func(_ *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			if len(es) != 1 || es[0].Name != mig || len(rs) == 0 {
				return false
			}
			for _, r := range rs {
				if r.Spec.EngineName != old || !r.Spec.Active {
					return false
				}
			}
			return true
		})
		e.Await("start fails", func() bool {
			return strings.Contains(e.Sim.LastSyncError(vol), "no healthy or scheduled replica for starting")
		})
		scan := clitest.New(t, cluster.KubeconfigPath()).Run(e.Ctx, "scan", vol, "-n", e.NS)
		testenv.Contains(t, "scan", scan.Stdout, "DanglingReplicas", "set-replicas")

		res := e.fix(fix.Hooks{}, vol, "--yes", "--backup-dir", filepath.Join(t.TempDir(), "backup"), "--timeout", "60s")
		if res.Code != cmdutil.ExitOK {
			t.Fatalf("exit %d", res.Code)
		}
		testenv.Contains(t, "stdout", res.Stdout, "repointed to "+mig, `volume.longhorn.io "vol-kb" repaired`)
		e.WaitFor("testenv.Settled on node-b", vol, testenv.Settled(testenv.NodeB))
		e.Await("sync errors stop", func() bool { return e.Sim.LastSyncError(vol) == "" })
		e.ExpectNoDataLoss(vol)
	})
}

// A stale engine deleted while the flags are inverted (its finalizer still
// pending): fix sets the flags while the engine exists; once it is gone
// Longhorn removes only inactive replicas.
func TestFixSetsFlagsBeforePendingCleanupEnds(t *testing.T) {
	testenv.PerRelease(t, []string{"v1.4.3", "v1.5.3"}, func(t *testing.T, version string) {
		e := newSim(t, version)
		vol := "vol-pending"
		old, mig := e.produceBug(vol)
		stuck := e.Sim.Inject(lhsim.Fault{Kind: lhsim.FinalizerStuck, Volume: vol, Engine: old})
		e.Delete(longhorn.Engines, old)
		e.WaitFor("old engine terminating", vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
			o := testenv.EngineOn(es, testenv.NodeA)
			return o != nil && o.DeletionTimestamp != nil
		})
		res := e.fix(fix.Hooks{}, vol, "--yes", "--wait=false", "--backup-dir", filepath.Join(t.TempDir(), "backup"))
		if res.Code != cmdutil.ExitOK {
			t.Fatalf("exit %d", res.Code)
		}
		testenv.Contains(t, "stdout", res.Stdout, "activated", "deactivated")
		if strings.Contains(res.Stdout, `engine.longhorn.io "`) {
			t.Errorf("an engine was written: %s", res.Stdout)
		}
		e.Sim.ClearFault(stuck)
		e.WaitFor("testenv.Settled on node-b", vol, testenv.Settled(testenv.NodeB))
		_, es, _ := e.State(vol)
		if len(es) != 1 || es[0].Name != mig {
			t.Errorf("engines %v", engineNames(es))
		}
		e.ExpectNoDataLoss(vol)
	})
}
