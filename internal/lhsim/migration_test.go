package lhsim_test

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

var randomEngineName = regexp.MustCompile(`^.+-e-[0-9a-f]{8}$`)

// TestMigrationHappyPath: confirm and rollback without faults end with one
// engine and consistent replicas, no data touched.
func TestMigrationHappyPath(t *testing.T) {
	t.Parallel()
	testenv.PerRelease(t, []string{"v1.4.3", "v1.5.1", "v1.6.0", "v1.7.0"}, func(t *testing.T, version string) {
		e := newEnv(t, version)
		deterministic := e.Sim.Version().DeterministicEngineNames()

		t.Run("confirm", func(t *testing.T) {
			e := e.sub(t)
			vol := "vol-confirm"
			e.CreateAttached(vol)
			_, es, rs := e.State(vol)
			checkEngineMeta(t, vol, es[0], e.Get(longhorn.Engines, es[0].Name))
			if deterministic && es[0].Name != vol+"-e-0" {
				t.Errorf("first engine %s, want %s-e-0", es[0].Name, vol)
			}
			if !deterministic && !randomEngineName.MatchString(es[0].Name) {
				t.Errorf("first engine %s, want a random <vol>-e-<8 hex> name", es[0].Name)
			}
			dirs := map[string]bool{}
			for _, r := range rs {
				dirs[r.Spec.DataDirectoryName] = true
			}
			e.StartMigration(vol)
			v, es, rs := e.State(vol)
			if e.Sim.Version().HasCurrentMigrationNodeID() && v.Status.CurrentMigrationNodeID != nodeB {
				t.Errorf("currentMigrationNodeID %q, want %s", v.Status.CurrentMigrationNodeID, nodeB)
			}
			old, mig := testenv.EngineOn(es, nodeA), testenv.EngineOn(es, nodeB)
			if deterministic && mig.Name != vol+"-e-1" {
				t.Errorf("migration engine %s, want %s-e-1", mig.Name, vol)
			}
			for _, r := range rs {
				if !dirs[r.Spec.DataDirectoryName] {
					t.Errorf("replica %s has a new data directory %s; clones must share", r.Name, r.Spec.DataDirectoryName)
				}
				if (r.Spec.EngineName == old.Name) != r.Spec.Active {
					t.Errorf("replica %s (engine %s) active=%v during migration", r.Name, r.Spec.EngineName, r.Spec.Active)
				}
			}
			if err := e.Sim.Detach(e.Ctx, vol, nodeA); err != nil {
				t.Fatal(err)
			}
			e.ExpectConverged(vol, nodeB, mig.Name)
			if e.Sim.Version().HasVolumeAttachments() {
				e.Await("node-b ticket satisfied", func() bool {
					va := e.va(vol)
					return va != nil && va.Satisfied(longhorn.CSITicketID(vol, nodeB)) && len(va.Spec.AttachmentTickets) == 1
				})
			}
		})

		t.Run("rollback", func(t *testing.T) {
			e := e.sub(t)
			vol := "vol-rollback"
			e.CreateAttached(vol)
			_, es, _ := e.State(vol)
			first := es[0].Name
			e.StartMigration(vol)
			if err := e.Sim.Detach(e.Ctx, vol, nodeB); err != nil {
				t.Fatal(err)
			}
			e.WaitFor("rolled back to node-a", vol, testenv.Settled(nodeA))
			e.WaitFor("two replicas left", vol, func(_ *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
				return len(rs) == 2 && es[0].Name == first
			})
			e.ExpectNoDataLoss(vol)
		})
	})
}

// sub reuses a parent's simulator in a subtest.
func (e *env) sub(t *testing.T) *env {
	c := *e.Env
	c.T = t
	return &env{&c}
}

// checkEngineMeta checks the engine as the model reads it, and in u as the
// server keeps it, the metadata the model does not hold.
func checkEngineMeta(t *testing.T, vol string, e longhorn.Engine, u *unstructured.Unstructured) {
	t.Helper()
	if e.Labels[longhorn.VolumeLabel] != vol {
		t.Errorf("engine %s label %s=%q", e.Name, longhorn.VolumeLabel, e.Labels[longhorn.VolumeLabel])
	}
	if e.Labels["longhornnode"] != e.Spec.NodeID {
		t.Errorf("engine %s label longhornnode=%q, spec.nodeID %q", e.Name, e.Labels["longhornnode"], e.Spec.NodeID)
	}
	fin := false
	for _, f := range u.GetFinalizers() {
		fin = fin || f == longhorn.Finalizer
	}
	if !fin {
		t.Errorf("engine %s has no %s finalizer", e.Name, longhorn.Finalizer)
	}
	refs := u.GetOwnerReferences()
	if len(refs) != 1 {
		t.Fatalf("engine %s owner references %v", e.Name, refs)
	}
	o := refs[0]
	if o.APIVersion != longhorn.APIVersion || o.Kind != "Volume" || o.Name != vol || o.UID == "" || o.Controller != nil || o.BlockOwnerDeletion != nil {
		t.Errorf("engine %s owner reference %+v", e.Name, o)
	}
	if e.Status.Endpoint != "/dev/longhorn/"+vol || e.Status.InstanceManagerName == "" || e.Status.OwnerID != e.Spec.NodeID ||
		e.Status.IP == "" || e.Status.Port == 0 || e.RWCount() != 2 || len(e.Status.Snapshots) == 0 {
		t.Errorf("engine %s status %+v", e.Name, e.Status)
	}
}

// produceBug runs the seed sequence: migrate to node-b, confirm while the
// old engine cannot be deleted. It returns the old and the new engine.
func (e *env) produceBug(vol string) (old, mig string) {
	e.T.Helper()
	e.CreateAttached(vol)
	old, mig = e.StartMigration(vol)
	fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.FailEngineDelete, Volume: vol, Engine: lhsim.RoleOld})
	if err := e.Sim.Detach(e.Ctx, vol, nodeA); err != nil {
		e.T.Fatal(err)
	}
	e.WaitStuck(vol)
	if h := e.Sim.FaultHits(fid); h != 1 {
		e.T.Errorf("FailEngineDelete fired %d times, want 1 (every later sync stops at the BUG)", h)
	}
	e.Sim.ClearFault(fid)
	return old, mig
}

// TestTwoActiveEnginesBug is the seed sequence: on affected releases a failed
// delete of the old engine during confirm leaves two active engines (#6642);
// on fixed releases the controller retries and finishes cleanly.
func TestTwoActiveEnginesBug(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version  string
		affected bool
	}{
		{"v1.3.3", true}, {"v1.4.3", true}, {"v1.5.1", true},
		{"v1.4.4", false}, {"v1.5.2", false}, {"v1.6.0", false},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.version)
			vol := "vol-bug"
			if tc.affected {
				old, mig := e.produceBug(vol)
				v, es, rs := e.State(vol)
				if v.Spec.NodeID != nodeB || v.Spec.MigrationNodeID != "" || v.Status.CurrentNodeID != nodeB {
					t.Errorf("volume not in the stuck confirm state:\n%s", lhsim.Describe(v, es, rs))
				}
				wantCMN := ""
				if e.Sim.Version().HasCurrentMigrationNodeID() {
					wantCMN = nodeB
				}
				if v.Status.CurrentMigrationNodeID != wantCMN {
					t.Errorf("currentMigrationNodeID %q, want %q", v.Status.CurrentMigrationNodeID, wantCMN)
				}
				for _, en := range es {
					if !en.Spec.Active || en.DeletionTimestamp != nil || en.Status.CurrentState != longhorn.StateRunning {
						t.Errorf("engine %s: active=%v deleting=%v state=%s", en.Name, en.Spec.Active, en.DeletionTimestamp != nil, en.Status.CurrentState)
					}
				}
				for _, r := range rs {
					if want := r.Spec.EngineName == old; r.Spec.Active != want {
						t.Errorf("replica %s (engine %s) active=%v, want %v: the flip must not have run", r.Name, r.Spec.EngineName, r.Spec.Active, want)
					}
				}
				var bug string
				for _, s := range e.Sim.SyncErrors(vol) {
					if strings.Contains(s, "BUG") {
						bug = s
						break
					}
				}
				prefix := "failed to sync " + e.NS + "/" + vol + ": failed to reconcile engine/replica state for " + vol + ": BUG: found the second active engine "
				if !strings.HasPrefix(bug, prefix) || !strings.Contains(bug, old) || !strings.Contains(bug, mig) {
					t.Errorf("sync error %q", bug)
				}
				line := `level=warning msg="Error syncing Longhorn volume ` + e.NS + "/" + vol + `"`
				if e.Sim.Version().Class() == longhorn.ClassL15a {
					line = `level=error msg="Failed to sync Longhorn volume ` + e.NS + "/" + vol + `"`
				}
				if !e.logged(vol, line) || !e.logged(vol, "node="+nodeB) {
					t.Errorf("no log line with %s and node=%s in:\n%s", line, nodeB, strings.Join(e.Sim.Logs(vol), "\n"))
				}
				if e.Sim.LastSyncError(vol) == "" {
					t.Error("LastSyncError is empty in the stuck state")
				}
				return
			}

			e.CreateAttached(vol)
			e.StartMigration(vol)
			_, es, _ := e.State(vol)
			old, mig := testenv.EngineOn(es, nodeA).Name, testenv.EngineOn(es, nodeB).Name
			fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.FailEngineDelete, Volume: vol, Engine: lhsim.RoleOld})
			if err := e.Sim.Detach(e.Ctx, vol, nodeA); err != nil {
				t.Fatal(err)
			}
			e.Await("delete retried", func() bool { return e.Sim.FaultHits(fid) >= 2 })
			e.WaitFor("confirm pending", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
				return v.Status.CurrentNodeID == nodeB
			})
			v, es, rs := e.State(vol)
			if testenv.ActiveCount(es) != 1 || testenv.EngineOn(es, nodeA) == nil || !testenv.EngineOn(es, nodeA).Spec.Active {
				t.Errorf("fixed release must keep exactly the old engine active while it cannot be deleted:\n%s", lhsim.Describe(v, es, rs))
			}
			if e.hasSyncError(vol, "second active engine") {
				t.Errorf("BUG error on a fixed release: %v", e.Sim.SyncErrors(vol))
			}
			e.Sim.ClearFaults()
			e.WaitFor("confirmed on node-b", vol, testenv.Settled(nodeB))
			_, es, _ = e.State(vol)
			if es[0].Name != mig || es[0].Name == old {
				t.Errorf("survivor %s, want %s", es[0].Name, mig)
			}
			e.ExpectNoDataLoss(vol)
		})
	}
}

// TestRepairAfterBug checks the consequences of the two documented repairs
// (docs/troubleshooting-two-active-engines.md: deleting on 1.3/1.4, and
// deactivating).
func TestRepairAfterBug(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version, how string
		dataLoss     bool
	}{
		{"v1.4.3", "deactivate", false},
		{"v1.4.3", "delete", true},
		{"v1.3.3", "delete", true},
		{"v1.5.1", "delete", false},
		{"v1.5.1", "deactivate", false},
	} {
		t.Run(tc.version+"/"+tc.how, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.version)
			vol := "vol-fix"
			old, mig := e.produceBug(vol)
			if tc.how == "deactivate" {
				e.JSONPatch(longhorn.Engines, old, `[{"op":"replace","path":"/spec/active","value":false}]`)
			} else {
				e.Delete(longhorn.Engines, old)
			}
			if !tc.dataLoss {
				e.ExpectConverged(vol, nodeB, mig)
				return
			}
			// Deleting on 1.4: the flip never runs, clean-up deletes the survivor's
			// (inactive) replicas, the originals stay active for a gone engine
			e.WaitFor("survivor lost its replicas", vol, func(_ *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
				if len(es) != 1 || es[0].Name != mig || len(rs) != 2 {
					return false
				}
				for _, r := range rs {
					if r.Spec.EngineName != old || !r.Spec.Active {
						return false
					}
				}
				return true
			})
			lost, err := e.Sim.DataLost(e.Ctx, vol)
			if err != nil {
				t.Fatal(err)
			}
			if !lost {
				t.Error("DataLost false after the survivor's replicas were cleaned up")
			}
			if w := e.Sim.WipedDirs(vol); len(w) != 0 {
				t.Errorf("inactive clones wiped data: %v", w)
			}
			// deleting a leftover (active) original wipes the shared directory
			_, _, rs := e.State(vol)
			e.Delete(longhorn.Replicas, rs[0].Name)
			e.Await("data directory wiped", func() bool { return len(e.Sim.WipedDirs(vol)) == 1 })
		})
	}
}
