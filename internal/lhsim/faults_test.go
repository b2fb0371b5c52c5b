package lhsim_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TestMigrationEngineNeverReady: the migration engine stays "starting", the
// confirm is refused (1.4 REST) or never happens (1.5+ VolumeAttachment),
// and the migration completes once the fault is cleared.
func TestMigrationEngineNeverReady(t *testing.T) {
	t.Parallel()
	testenv.PerRelease(t, []string{"v1.4.3", "v1.6.0"}, func(t *testing.T, version string) {
		e := newEnv(t, version)
		vol := "vol-never-ready"
		fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.MigrationEngineNeverReady, Volume: vol})
		e.CreateAttached(vol)
		if err := e.Sim.Attach(e.Ctx, vol, nodeB); err != nil {
			t.Fatal(err)
		}
		e.WaitFor("migration engine placed but not running", vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
			m := testenv.EngineOn(es, nodeB)
			return m != nil && m.Spec.DesireState == longhorn.StateRunning && m.Status.CurrentState == longhorn.StateStarting
		})
		if e.Sim.FaultHits(fid) == 0 {
			t.Error("fault never fired")
		}
		err := e.Sim.Detach(e.Ctx, vol, nodeA)
		if e.Sim.Version().HasVolumeAttachments() {
			if err != nil {
				t.Fatal(err)
			}
			e.Await("confirm held back", func() bool {
				return e.logged(vol, "is in progress for synchronizing snapshots")
			})
			v, es, rs := e.State(vol)
			if v.Spec.NodeID != nodeA || v.Spec.MigrationNodeID != nodeB || testenv.ActiveCount(es) != 1 || !testenv.EngineOn(es, nodeA).Spec.Active {
				t.Errorf("confirmed without a ready migration engine:\n%s", lhsim.Describe(v, es, rs))
			}
			id := longhorn.CSITicketID(vol, nodeB)
			va := e.va(vol)
			st := va.Status.AttachmentTicketStatuses[id]
			if st.Satisfied || len(st.Conditions) == 0 || st.Conditions[0].Message != "waiting for volume to migrate to node "+nodeB {
				t.Errorf("node-b ticket status %+v", st)
			}
			e.Sim.ClearFaults()
		} else {
			if err == nil || !strings.Contains(err.Error(), "migration is not ready yet") {
				t.Fatalf("confirm of an unready migration: err %v", err)
			}
			e.Sim.ClearFaults()
			e.WaitFor("migration engine ready", vol, testenv.MigrationReady)
			if err := e.Sim.Detach(e.Ctx, vol, nodeA); err != nil {
				t.Fatal(err)
			}
		}
		e.WaitFor("confirmed on node-b", vol, testenv.Settled(nodeB))
		e.ExpectNoDataLoss(vol)
	})
}

// TestFinalizerStuck: a confirm on a fixed release deletes the old engine;
// with its finalizer stuck it stays Terminating, still spec.active (the
// pending-cleanup state, during which Longhorn's sync reports the BUG).
func TestFinalizerStuck(t *testing.T) {
	t.Parallel()
	vol := "vol-stuck"
	e := newAttached(t, "v1.4.4", vol)
	e.StartMigration(vol)
	_, es, _ := e.State(vol)
	old := testenv.EngineOn(es, nodeA).Name
	fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.FinalizerStuck, Engine: old})
	if err := e.Sim.Detach(e.Ctx, vol, nodeA); err != nil {
		t.Fatal(err)
	}
	e.WaitFor("old engine Terminating", vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
		o := testenv.EngineOn(es, nodeA)
		return len(es) == 2 && o != nil && o.DeletionTimestamp != nil && testenv.EngineOn(es, nodeB).Spec.Active
	})
	e.Await("finalizer held at least twice", func() bool { return e.Sim.FaultHits(fid) >= 2 })
	// GetCurrentEngineAndExtras ignores deletionTimestamp: the pending
	// cleanup fails every volume sync, on fixed releases too
	e.Await("BUG while the old engine is Terminating", func() bool {
		return e.hasSyncError(vol, "BUG: found the second active engine")
	})
	u := e.Get(longhorn.Engines, old)
	if len(u.GetFinalizers()) != 1 || u.GetFinalizers()[0] != longhorn.Finalizer {
		t.Errorf("finalizers %v", u.GetFinalizers())
	}
	if active, _, _ := unstructured.NestedBool(u.Object, "spec", "active"); !active {
		t.Error("a deleted old engine keeps spec.active=true until it is gone")
	}
	if procs := e.Sim.Processes(nodeA); contains(procs, old) {
		t.Errorf("process of the deleted engine still runs: %v", procs)
	}
	e.Sim.ClearFaults()
	e.WaitFor("confirmed on node-b", vol, testenv.Settled(nodeB))
	e.ExpectNoDataLoss(vol)
}

// TestOrphanProcess: the old engine's CR goes, its process stays listed in
// the old node's instance manager until killed.
func TestOrphanProcess(t *testing.T) {
	t.Parallel()
	testenv.PerRelease(t, []string{"v1.4.3", "v1.5.1"}, func(t *testing.T, version string) {
		vol := "vol-orphan"
		e := newAttached(t, version, vol)
		e.StartMigration(vol)
		_, es, _ := e.State(vol)
		oldE := testenv.EngineOn(es, nodeA)
		old, im := oldE.Name, oldE.Status.InstanceManagerName
		e.Sim.Inject(lhsim.Fault{Kind: lhsim.OrphanProcess, Volume: vol, Engine: lhsim.RoleOld})
		e.Confirm(vol)
		if got := e.Sim.OrphanProcesses(); !contains(got, old) {
			t.Fatalf("orphans %v, want %s", got, old)
		}
		listed := func() bool {
			u := e.Get(longhorn.InstanceManagers, im)
			imo := testenv.Decode[longhorn.InstanceManager](t, u)
			return contains(imo.EngineProcessNames(), old)
		}
		e.Await("orphan listed in "+im, listed)
		e.Sim.KillProcess(old)
		e.Await("orphan gone from "+im, func() bool { return !listed() })
	})
}

// TestEngineCrashDuringMigration: a crashed migration engine is reverted
// and the migration starts over with a new one.
func TestEngineCrashDuringMigration(t *testing.T) {
	t.Parallel()
	vol := "vol-crash"
	e := newAttached(t, "v1.4.3", vol)
	fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.EngineCrash, Volume: vol, Engine: lhsim.RoleNew, Times: 1})
	if err := e.Sim.Attach(e.Ctx, vol, nodeB); err != nil {
		t.Fatal(err)
	}
	e.Await("crash reverted", func() bool { return e.logged(vol, "The migration engine or all migration replicas crashed") })
	e.WaitFor("migration engine ready again", vol, testenv.MigrationReady)
	if h := e.Sim.FaultHits(fid); h != 1 {
		t.Errorf("crashed %d times, want 1", h)
	}
	e.Confirm(vol)
	e.ExpectNoDataLoss(vol)
}

// TestDirectWritesUndone: from 1.5 the VolumeAttachment controller owns
// spec.migrationNodeID; without a ticket for the node, a direct write is
// rolled back.
func TestDirectWritesUndone(t *testing.T) {
	t.Parallel()
	vol := "vol-direct"
	e := newAttached(t, "v1.5.1", vol)
	u := e.Get(longhorn.Volumes, vol)
	if err := unstructured.SetNestedField(u.Object, nodeB, "spec", "migrationNodeID"); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Dynamic().Resource(longhorn.Volumes.GVR()).Namespace(e.NS).Update(e.Ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Await("rolled back", func() bool { return e.logged(vol, "Rolling back migration") })
	e.WaitFor("back on node-a alone", vol, testenv.Settled(nodeA))
}

// TestSetup checks the Setting and the instance managers per release.
func TestSetup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		imTypes []string
	}{{"v1.4.3", []string{"engine", "replica"}}, {"v1.5.1", []string{"aio"}}} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.version)
			u := e.Get(longhorn.Settings, longhorn.VersionSetting)
			if v, _, _ := unstructured.NestedString(u.Object, "value"); v != tc.version {
				t.Errorf("setting value %q", v)
			}
			l, err := cluster.Dynamic().Resource(longhorn.InstanceManagers.GVR()).Namespace(e.NS).List(e.Ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, im := range l.Items {
				node, _, _ := unstructured.NestedString(im.Object, "spec", "nodeID")
				typ, _, _ := unstructured.NestedString(im.Object, "spec", "type")
				if node == nodeA {
					types = append(types, typ)
				}
				if typ == "engine" && !strings.HasPrefix(im.GetName(), "instance-manager-e-") ||
					typ == "replica" && !strings.HasPrefix(im.GetName(), "instance-manager-r-") ||
					typ == "aio" && strings.Count(im.GetName(), "-") != 2 {
					t.Errorf("instance manager name %s for type %s", im.GetName(), typ)
				}
			}
			if strings.Join(types, ",") != strings.Join(tc.imTypes, ",") {
				t.Errorf("instance managers on %s: %v, want %v", nodeA, types, tc.imTypes)
			}
		})
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestTicketRules: from 1.7 a third csi ticket is refused; from 1.11.3 and
// 1.12.1 a migration waits for its target node to be Ready.
func TestTicketRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "v1.12.1")
	if err := e.Sim.AddNode(e.Ctx, "node-c", lhsim.NodeOptions{}); err != nil {
		t.Fatal(err)
	}
	vol := "vol-tickets"
	if err := e.Sim.CreateVolume(e.Ctx, vol, lhsim.VolumeOptions{Migratable: true, ReplicaNodes: []string{nodeA}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Sim.Attach(e.Ctx, vol, nodeA); err != nil {
		t.Fatal(err)
	}
	e.WaitFor("attached to node-a", vol, testenv.Settled(nodeA))
	if err := e.Sim.SetNodeReady(e.Ctx, nodeB, false); err != nil {
		t.Fatal(err)
	}
	if err := e.Sim.Attach(e.Ctx, vol, nodeB); err != nil {
		t.Fatal(err)
	}
	e.Await("migration held back", func() bool { return e.logged(vol, "target node "+nodeB+" not ready") })
	if v, es, rs := e.State(vol); v.Spec.MigrationNodeID != "" || len(es) != 1 {
		t.Errorf("migration started towards a node that is not Ready:\n%s", lhsim.Describe(v, es, rs))
	}
	if err := e.Sim.Attach(e.Ctx, vol, "node-c"); err == nil || !strings.Contains(err.Error(), "more than two nodes") {
		t.Errorf("third csi ticket: err %v", err)
	}
	if err := e.Sim.SetNodeReady(e.Ctx, nodeB, true); err != nil {
		t.Fatal(err)
	}
	e.WaitFor("migration engine ready", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
		m := testenv.EngineOn(es, nodeB)
		return v.Spec.MigrationNodeID == nodeB && m != nil && m.Status.CurrentState == longhorn.StateRunning
	})
	e.Confirm(vol)
}

// TestDeleteVolume: deleting a Volume deletes its engines, replicas and
// VolumeAttachment, whose finalizers the simulator removes, then the volume.
func TestDeleteVolume(t *testing.T) {
	t.Parallel()
	vol := "vol-delete"
	e := newAttached(t, "v1.5.1", vol)
	e.Delete(longhorn.Volumes, vol)
	e.Await("everything gone", func() bool {
		for _, r := range []longhorn.Resource{longhorn.Volumes, longhorn.Engines, longhorn.Replicas, longhorn.VolumeAttachments} {
			l, err := cluster.Dynamic().Resource(r.GVR()).Namespace(e.NS).List(e.Ctx, metav1.ListOptions{})
			if err != nil || len(l.Items) > 0 {
				return false
			}
		}
		return true
	})
	if got := e.Sim.Processes(nodeA); len(got) != 0 {
		t.Errorf("processes left on %s: %v", nodeA, got)
	}
}

// TestBugViaUpdateConflict: Longhorn updates the old engine right before
// deleting it; a conflict there is the other way into #6642.
func TestBugViaUpdateConflict(t *testing.T) {
	t.Parallel()
	vol := "vol-conflict"
	e := newAttached(t, "v1.4.3", vol)
	e.StartMigration(vol)
	fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.FailEngineUpdate, Volume: vol, Engine: lhsim.RoleOld, Times: 1})
	if err := e.Sim.Detach(e.Ctx, vol, nodeA); err != nil {
		t.Fatal(err)
	}
	e.WaitFor("two active engines", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
		return len(es) == 2 && testenv.ActiveCount(es) == 2 && v.Status.CurrentNodeID == nodeB
	})
	e.Await("BUG sync error", func() bool { return e.hasSyncError(vol, "BUG: found the second active engine") })
	if h := e.Sim.FaultHits(fid); h != 1 {
		t.Errorf("FailEngineUpdate fired %d times", h)
	}
}

// TestNodeDownInstancesLoseTheirAddress: as Longhorn's instance handler
// does, an instance on a node that goes down is unknown and has no address;
// Longhorn's datastore refuses a replica whose state and address disagree,
// which would stall every sync of its volume.
func TestNodeDownInstancesLoseTheirAddress(t *testing.T) {
	t.Parallel()
	vol := "vol-node-down"
	e := newAttached(t, "v1.10.0", vol)
	// the state, ip and storageIP of the volume's replica on node-b
	onB := func() (state, ip, storageIP string) {
		l, err := cluster.Dynamic().Resource(longhorn.Replicas.GVR()).Namespace(e.NS).List(e.Ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range l.Items {
			if node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeID"); node != nodeB {
				continue
			}
			state, _, _ = unstructured.NestedString(u.Object, "status", "currentState")
			ip, _, _ = unstructured.NestedString(u.Object, "status", "ip")
			storageIP, _, _ = unstructured.NestedString(u.Object, "status", "storageIP")
		}
		return state, ip, storageIP
	}
	if err := e.Sim.SetNodeReady(e.Ctx, nodeB, false); err != nil {
		t.Fatal(err)
	}
	e.Await("the replica on node-b unknown, without an address", func() bool {
		state, ip, storageIP := onB()
		return state == longhorn.StateUnknown && ip == "" && storageIP == ""
	})
}
