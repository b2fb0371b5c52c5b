package detect

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// rolledBack: the migration to B rolled back, spec.migrationNodeID cleared,
// the migration engine on B and its clones still there (inactive), the
// volume on A: the row Longhorn's clean-up finishes.
func rolledBack(vc versionCase) *scenario {
	s := migrating(vc, "vol")
	v := s.volume()
	v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID = "", ""
	return s
}

func wantWarning(t *testing.T, what string, f Finding, typ Type, says string) {
	t.Helper()
	if f.Type != typ || f.Severity != SeverityWarning || f.Action != ActionNone || !strings.Contains(f.Reason, says) {
		t.Errorf("%s: got %s/%s/%s, want %s/warning/none saying %q: %s", what, f.Type, f.Severity, f.Action, typ, says, f.Reason)
	}
}

// Extra engines of a volume that is not migratable: every release's
// processMigration skips it, so nothing removes them (Longhorn 1.5.3,
// explorer seed 27 states 46 and 85).
func TestExtraEnginesOfVolumeNotMigratable(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f, vcL16} {
		s := rolledBack(vc)
		s.volume().Spec.AccessMode, s.volume().Spec.Migratable = longhorn.AccessModeRWO, false
		_, f := s.classify(t)
		wantWarning(t, vc.name, f, TypeMigrationFinishing, "not migratable")
		// a migratable one: Longhorn removes the extra itself
		s.volume().Spec.AccessMode, s.volume().Spec.Migratable = longhorn.AccessModeRWX, true
		if _, f := s.classify(t); f.Severity != SeverityInfo || f.Action != ActionWait {
			t.Errorf("%s migratable: %s/%s: %s", vc.name, f.Severity, f.Action, f.Reason)
		}
	}
}

// A clone active on its original's directory: in flight, with the
// migration engine placed anywhere (seed 27 state 87 on 1.5.3, the
// migration engine still on the source node: Longhorn lost data), it is a
// warning; once the migration is over Longhorn's clean-up deactivates the
// clone itself (1.5.3 finished states 71 and 83): a wait.
func TestActiveCloneBeside(t *testing.T) {
	s := migrating(vcL15f, "vol")
	s.engine(s.engB).Spec.NodeID = nodeA
	clone := s.replicasOf(s.engB)[0]
	clone.Spec.Active = true
	_, f := s.classify(t)
	wantWarning(t, "in flight", f, TypeMigrationInFlight, "set spec.active=false on "+clone.Name)
	// the migration engine being deleted: Longhorn 1.4.3 deleted the clone
	// and wiped the directory (explorer seed 45 states 156 and 565)
	s = migrating(vcL14a, "vol")
	now := metav1.Now()
	s.engine(s.engB).DeletionTimestamp = &now
	clone = s.replicasOf(s.engB)[0]
	clone.Spec.Active = true
	_, f = s.classify(t)
	wantWarning(t, "in flight, migration engine deleting", f, TypeMigrationInFlight, "set spec.active=false on "+clone.Name)
	for _, vc := range []versionCase{vcL15f, vcL16} {
		s := rolledBack(vc)
		s.replicasOf(s.engB)[0].Spec.Active = true
		if _, f := s.classify(t); f.Type != TypeMigrationFinishing || f.Severity != SeverityInfo || f.Action != ActionWait {
			t.Errorf("%s finishing: %s/%s/%s: %s", vc.name, f.Type, f.Severity, f.Action, f.Reason)
		}
	}
}

// On 1.5 Longhorn's finish takes an engine on status.pendingNodeID when
// none is on spec.nodeID, after moving status.currentNodeID to
// spec.nodeID: the two may part for good (1.5.3, seed 27 state 92, in two
// runs of three). From 1.6 pendingNodeID does not count, and with the
// confirm's currentMigrationNodeID set no engine is found at all. 1.4.3
// took the engine on the pending node too and kept it there (seed 45
// states 2420 and 2467).
func TestFinishingEngineOnlyOnPendingNode(t *testing.T) {
	build := func(vc versionCase) *scenario {
		s := rolledBack(vc)
		v := s.volume()
		v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.PendingNodeID = nodeB, nodeA, nodeA
		e := s.engine(s.engB)
		e.Spec.NodeID, e.Status.CurrentState = "", longhorn.StateStopped
		if vc.parsed().HasVolumeAttachments() {
			s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeB))
		}
		return s
	}
	_, f := build(vcL15f).classify(t)
	wantWarning(t, vcL15f.name, f, TypeMigrationFinishing, "on status.pendingNodeID "+nodeA)
	_, f = build(vcL14a).classify(t)
	wantWarning(t, vcL14a.name, f, TypeMigrationFinishing, "on status.pendingNodeID "+nodeA)
	s := build(vcL16)
	s.volume().Status.CurrentMigrationNodeID = nodeB
	_, f = s.classify(t)
	wantWarning(t, vcL16.name, f, TypeMigrationFinishing, "cannot find the current engine")
	// without currentMigrationNodeID too, from 1.6 (Longhorn 1.6.2, seed 27
	// state 92); on 1.5 with no engine on the pending node it was not run
	s.volume().Status.CurrentMigrationNodeID = ""
	_, f = s.classify(t)
	wantWarning(t, vcL16.name+" no cmn", f, TypeMigrationFinishing, "cannot find the current engine")
	// 1.5 with nothing pending: the finish needs the engine on
	// spec.nodeID as from 1.6 (1.5.3 held seed 37 state 23 so)
	s = build(vcL15f)
	s.volume().Status.PendingNodeID = ""
	_, f = s.classify(t)
	wantWarning(t, vcL15f.name+", nothing pending", f, TypeMigrationFinishing, "cannot find the current engine")
}

// A detached volume with two engines and no node anywhere in its node
// fields: from 1.7 the finish runs detached and finds no current engine
// (Longhorn 1.10.0, explorer seed 33 state 7); before 1.7 the finish
// waits for the volume to attach.
func TestFinishingDetachedWithoutNode(t *testing.T) {
	build := func(vc versionCase) *scenario {
		s := rolledBack(vc)
		v := s.volume()
		v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.CurrentMigrationNodeID = "", "", ""
		v.Status.State = longhorn.VolumeStateDetached
		e := s.engine(s.engA)
		e.Spec.NodeID, e.Status.CurrentState = "", longhorn.StateStopped
		if vc.parsed().HasVolumeAttachments() {
			s.withTickets(map[string]bool{})
		}
		return s
	}
	_, f := build(versionCase{"1.10.0", "v1.10.0", false}).classify(t)
	wantWarning(t, "1.10.0", f, TypeMigrationFinishing, "finds no current engine")
	if _, f := build(vcL16).classify(t); strings.Contains(f.Reason, "finds no current engine") {
		t.Errorf("1.6: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
}

// Tickets on two nodes while a rollback is finished: a new migration races
// the clean-up (1.5.3, seed 27 state 55: migrating in one run, detached
// half-way in two).
func TestFinishingWithMigrationRequested(t *testing.T) {
	s := rolledBack(vcL15f)
	s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeA), csiTicket(s.vol, nodeB))
	_, f := s.classify(t)
	wantWarning(t, "two tickets", f, TypeMigrationFinishing, "ask for a new migration")
	s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeA))
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("one ticket: %s: %s", f.Severity, f.Reason)
	}
}

// An old engine being deleted while an extra one stays for
// processMigration, and an engine upgrade is pending: the extra is never
// removed (1.5.3, seed 27 state 38).
func TestPendingCleanupExtraStaysWhileUpgradePending(t *testing.T) {
	s := pendingScenario(vcL15f, time.Second)
	s.withThird(nodeC, time.Minute).Spec.Active = false
	v := s.volume()
	v.Spec.EngineImage, v.Status.CurrentImage = "longhornio/longhorn-engine:new", "longhornio/longhorn-engine:old"
	_, f := s.classify(t)
	wantWarning(t, "upgrade pending", f, TypePendingCleanup, "an engine upgrade is pending")
	v.Spec.EngineImage = v.Status.CurrentImage
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("no upgrade: %s: %s", f.Severity, f.Reason)
	}
}

// A pending clean-up whose kept engine's replicas have all failed while
// the engine being deleted still has healthy ones: the clean-up takes the
// last copy (Longhorn 1.12.0, explorer seed 37 state 74).
func TestPendingCleanupTakesLastCopy(t *testing.T) {
	s := pendingScenario(versionCase{"1.12.0", "v1.12.0", false}, time.Second)
	for _, r := range s.replicasOf(s.engB) {
		r.Spec.FailedAt = t0.Format(time.RFC3339)
	}
	_, f := s.classify(t)
	wantWarning(t, "kept engine failed", f, TypePendingCleanup, "the only healthy copies are replicas "+s.replicasOf(s.engA)[0].Name)
	s.replicasOf(s.engB)[0].Spec.FailedAt = ""
	if _, f := s.classify(t); strings.Contains(f.Reason, "the only healthy copies") {
		t.Errorf("one kept replica healthy: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
}

// A pending clean-up while an engine upgrade is pending, the deleted
// engine's replicas beside the kept one's: the live upgrade can copy them
// and activate copies naming the deleted engine (Longhorn 1.10.0, explorer
// seed 33 states 18 and 38).
func TestPendingCleanupUpgradeBesideStale(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f, vcL16, {"1.10.0", "v1.10.0", false}} {
		s := pendingScenario(vc, time.Second)
		v := s.volume()
		v.Spec.EngineImage, v.Status.CurrentImage = "longhornio/longhorn-engine:new", "longhornio/longhorn-engine:old"
		if vc.parsed().AtLeast(1, 6, 0) {
			v.Spec.EngineImage, v.Spec.Image = "", "longhornio/longhorn-engine:new"
		}
		_, f := s.classify(t)
		wantWarning(t, vc.name, f, TypePendingCleanup, "live upgrade copies either replica")
		if !strings.Contains(f.Reason, s.replicasOf(s.engA)[0].Name) {
			t.Errorf("%s: the deleted engine's replicas are not named: %s", vc.name, f.Reason)
		}
		v.Spec.EngineImage, v.Spec.Image = v.Status.CurrentImage, ""
		if _, f := s.classify(t); f.Severity != SeverityInfo {
			t.Errorf("%s, no upgrade: %s: %s", vc.name, f.Severity, f.Reason)
		}
	}
}

// A migration whose target is the node the active engine runs on never
// gets ready (Longhorn 1.4.3, seed 27 state 94).
func TestMigrationOntoSource(t *testing.T) {
	s := migrating(vcL14a, "vol")
	s.volume().Spec.MigrationNodeID = nodeA
	s.volume().Spec.NodeID = nodeB
	e := s.engine(s.engB)
	e.Spec.NodeID, e.Status.CurrentState = "", longhorn.StateStopped
	_, f := s.classify(t)
	wantWarning(t, "target is the source", f, TypeMigrationInFlight, "is the node the active engine "+s.engA+" already runs on")
	s.volume().Spec.MigrationNodeID, s.volume().Spec.NodeID = nodeB, nodeA
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("ordinary migration: %s: %s", f.Severity, f.Reason)
	}
}

// An attached volume whose one engine runs on another node: Longhorn 1.4.3
// left it so (seed 27 state 81), as 1.5.3 left the finish of state 92.
func TestEngineOffNode(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f, vcL16} {
		s := healthy(vc, "vol")
		s.engine(s.engA).Spec.NodeID = nodeC
		tickets := vc.parsed().HasVolumeAttachments()
		if tickets {
			s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeA))
		}
		_, f := s.classify(t)
		wantWarning(t, vc.name, f, TypeEngineOffNode, "runs on "+nodeC)
		if f.Family == nil || len(f.Family.Steps) != 2 || f.Keep != s.engA {
			t.Errorf("%s: family %+v keep %q", vc.name, f.Family, f.Keep)
		}
		if tickets {
			// no ticket asks for the volume: it detaches, which ends it
			// (1.10.0, seed 27 state 42)
			s.st.VolumeAttachments = nil
			if _, f := s.classify(t); f.Type == TypeEngineOffNode {
				t.Errorf("%s: no ticket: %s", vc.name, f.Reason)
			}
			s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeA))
		}
		// the engine on spec.nodeID, status.currentNodeID not moved yet:
		// not this state
		s.volume().Spec.NodeID = nodeC
		if _, f := s.classify(t); f.Type == TypeEngineOffNode {
			t.Errorf("%s: engine on spec.nodeID: %s", vc.name, f.Reason)
		}
		s.volume().Spec.NodeID = nodeA
		// detaching: the engine's node is cleared first; not this state
		s.engine(s.engA).Spec.NodeID = ""
		if _, f := s.classify(t); f.Type == TypeEngineOffNode {
			t.Errorf("%s: engine without a node: %s", vc.name, f.Reason)
		}
	}
}

// A pending clean-up whose engine being deleted still has replicas active
// on the kept engine's directories: Longhorn 1.10.0 removed the engine and
// left them active, naming it (seed 27 state 33).
func TestPendingCleanupDanglingOnceGone(t *testing.T) {
	vc := versionCase{"L15f-1.10.0", "v1.10.0", false}
	s := pendingScenario(vc, time.Second)
	s.setReplicasActive(s.engA, true)
	_, f := s.classify(t)
	wantWarning(t, "both active", f, TypePendingCleanup, "leaves them active, naming it")
	s.setReplicasActive(s.engA, false)
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("flipped already: %s: %s", f.Severity, f.Reason)
	}
	// the confirm's own moment: status.currentNodeID still on the old
	// engine's node (the state Longhorn 1.10.0 left so)
	s.setReplicasActive(s.engA, true)
	s.volume().Status.CurrentNodeID = nodeA
	_, f = s.classify(t)
	wantWarning(t, "confirm finishing, both active", f, TypePendingCleanup, "leaves them active, naming it")
	// 1.9.0 left seed 27 state 33 so too; 1.4.3 finished it cleanly
	for _, tc := range []struct {
		vc   versionCase
		warn bool
	}{{versionCase{"L15f-1.9.0", "v1.9.0", false}, true}, {vcL16, false}} {
		s := pendingScenario(tc.vc, time.Second)
		s.setReplicasActive(s.engA, true)
		if _, f := s.classify(t); strings.Contains(f.Reason, "leaves them active, naming it") != tc.warn {
			t.Errorf("%s: %s/%s: %s", tc.vc.name, f.Type, f.Severity, f.Reason)
		}
	}
	// before 1.9 too when the engine kept is not running (1.4.3, seed 45
	// state 28, the kept engine in error)
	s = pendingScenario(vcL14a, time.Second)
	s.setReplicasActive(s.engA, true)
	s.engine(s.engB).Status.CurrentState = "error"
	_, f = s.classify(t)
	wantWarning(t, "1.4, kept engine in error", f, TypePendingCleanup, "leaves them active, naming it")
	// one of them active on a directory of its own: left so too (1.12.0,
	// seed 35 state 1)
	s = pendingScenario(vc, time.Second)
	own := s.replicasOf(s.engA)[0]
	own.Spec.Active, own.Spec.DataDirectoryName = true, "own-dir"
	_, f = s.classify(t)
	wantWarning(t, "own directory", f, TypePendingCleanup, "are still active: once the engine is gone")
}

// On 1.5 a pending clean-up whose csi ticket asks for another node than
// spec.nodeID, with status.pendingNodeID on a third: Longhorn 1.5.3
// detached seed 27 state 3 and kept it detached (four runs); with the
// ticket on spec.nodeID, or from 1.6, a wait.
func TestPendingCleanupLeftoverPendingOnMove(t *testing.T) {
	build := func(vc versionCase, ticket string) *scenario {
		s := pendingScenario(vc, time.Second)
		v := s.volume()
		v.Spec.NodeID, v.Status.PendingNodeID = nodeA, nodeC
		s.withTickets(map[string]bool{}, csiTicket(s.vol, ticket))
		return s
	}
	_, f := build(vcL15f, nodeB).classify(t)
	wantWarning(t, "1.5, ticket elsewhere", f, TypePendingCleanup, "leftover status.pendingNodeID then keeps it detached")
	if _, f := build(vcL15f, nodeA).classify(t); f.Severity != SeverityInfo {
		t.Errorf("1.5, ticket on spec.nodeID: %s: %s", f.Severity, f.Reason)
	}
	if _, f := build(vcL16, nodeB).classify(t); strings.Contains(f.Reason, "leftover status.pendingNodeID") {
		t.Errorf("1.6: %s: %s", f.Severity, f.Reason)
	}
}

// From 1.7 a faulted volume's confirm or rollback is finished while the
// volume is detached, and it depends on timing whether it completes
// (Longhorn 1.7.2, seed 27 state 90: once finished, once left detaching);
// before 1.7 the robustness rule calls it stuck already.
func TestFinishingFaultedFrom17(t *testing.T) {
	vc := versionCase{"L15f-1.7.2", "v1.7.2", false}
	s := rolledBack(vc)
	s.volume().Status.Robustness = longhorn.RobustnessFaulted
	_, f := s.classify(t)
	wantWarning(t, vc.name, f, TypeMigrationFinishing, "depends on timing")
	s.volume().Status.Robustness = longhorn.RobustnessDegraded
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("degraded: %s: %s", f.Severity, f.Reason)
	}
}

// A confirm being finished (status.currentMigrationNodeID set) with no
// active engine fails at every sync:
//   - from 1.7 (seen on 1.9, 1.10, 1.12), one engine on spec.nodeID and
//     another on status.currentNodeID: the pick of the current engine
//     fails (1.10.0 and 1.12.0, seed 27 state 50);
//   - from 1.5, the one engine on status.currentNodeID and none on
//     spec.nodeID or the migration node: the pick takes it and the finish
//     finds none (1.10.0 seed 33 states 133 and 141, 1.5.3 seed 37 state 26).
func TestFinishingPickFailsWithNoActiveEngine(t *testing.T) {
	v19, v110, v112 := versionCase{"L15f-1.9.0", "v1.9.0", false}, versionCase{"L15f-1.10.0", "v1.10.0", false}, versionCase{"L15f-1.12.0", "v1.12.0", false}
	for _, tc := range []struct {
		vc         versionCase
		targetGone bool // the engine on spec.nodeID has no node
		want       string
	}{
		{v19, false, "found the second new active engine"}, {v110, false, "found the second new active engine"},
		{v112, false, "found the second new active engine"}, {vcL16, false, ""},
		{v110, true, "where no engine is"}, {vcL16, true, "where no engine is"}, {vcL15f, true, "where no engine is"}, {vcL14a, true, ""},
	} {
		s := migrating(tc.vc, "vol")
		v := s.volume()
		v.Spec.MigrationNodeID, v.Spec.NodeID = "", nodeB
		v.Status.CurrentMigrationNodeID = nodeB
		s.engine(s.engA).Spec.Active = false
		if tc.targetGone {
			e := s.engine(s.engB)
			e.Spec.NodeID, e.Status.CurrentState = "", longhorn.StateStopped
		}
		_, f := s.classify(t)
		warned := f.Severity == SeverityWarning && (strings.Contains(f.Reason, "found the second new active engine") || strings.Contains(f.Reason, "where no engine is"))
		if (tc.want == "") == warned || (tc.want != "" && !strings.Contains(f.Reason, tc.want)) {
			t.Errorf("%s, target gone %t: want %q: %s/%s: %s", tc.vc.name, tc.targetGone, tc.want, f.Type, f.Severity, f.Reason)
		}
	}
}

// A finish with no engine on spec.nodeID while no ticket asks for the
// volume there: from 1.7 it detaches and the finish runs meanwhile, with
// an outcome that depends on timing (explorer seed 35 state 90: 1.12.0
// finished it, 1.11.1 left it detached); 1.6 says it is stuck.
func TestFinishingWithoutEngineWhileDetaching(t *testing.T) {
	for _, tc := range []struct {
		vc     versionCase
		timing bool
	}{{versionCase{"L15f-1.12.0", "v1.12.0", false}, true}, {vcL16, false}} {
		s := rolledBack(tc.vc)
		s.engine(s.engA).Spec.NodeID = ""
		s.withTickets(map[string]bool{})
		_, f := s.classify(t)
		if f.Severity != SeverityWarning || strings.Contains(f.Reason, "depends on timing") != tc.timing {
			t.Errorf("%s: %s/%s: %s", tc.vc.name, f.Type, f.Severity, f.Reason)
		}
	}
}

// From 1.7 up to 1.9.1 a confirm finished while the volume is attaching can
// be left with status.currentMigrationNodeID set on a detached volume
// (longhorn#11479; 1.9.0 seed 27 state 90 three runs of three, 1.7.2 once);
// 1.9.2+ and before 1.7 (finished only once attached) are not warned.
func TestFinishingWhileNotAttached(t *testing.T) {
	for _, tc := range []struct {
		vc    versionCase
		state string
		warn  bool
	}{
		{versionCase{"L15f-1.7.2", "v1.7.2", false}, longhorn.VolumeStateAttaching, true},
		{versionCase{"L15f-1.9.0", "v1.9.0", false}, longhorn.VolumeStateAttaching, true},
		{versionCase{"L15f-1.9.0", "v1.9.0", false}, longhorn.VolumeStateDetaching, true},
		{versionCase{"L15f-1.9.0", "v1.9.0", false}, longhorn.VolumeStateAttached, false},
		{versionCase{"L15f-1.9.2", "v1.9.2", false}, longhorn.VolumeStateAttaching, false},
		{versionCase{"L15f-1.10.0", "v1.10.0", false}, longhorn.VolumeStateAttaching, false},
		{vcL16, longhorn.VolumeStateAttaching, false},
	} {
		s := migrating(tc.vc, "vol")
		v := s.volume()
		v.Spec.MigrationNodeID, v.Spec.NodeID = "", nodeB
		v.Status.CurrentMigrationNodeID, v.Status.State = nodeB, tc.state
		s.engine(s.engB).Spec.Active = false
		_, f := s.classify(t)
		if got := f.Severity == SeverityWarning && strings.Contains(f.Reason, "longhorn#11479"); got != tc.warn {
			t.Errorf("%s %s: warning %t, want %t: %s/%s: %s", tc.vc.name, tc.state, got, tc.warn, f.Type, f.Severity, f.Reason)
		}
		// nothing to leave set without status.currentMigrationNodeID
		// (1.9.0 finished seed 35 state 75)
		v.Status.CurrentMigrationNodeID = ""
		if _, f := s.classify(t); strings.Contains(f.Reason, "longhorn#11479") {
			t.Errorf("%s %s, no currentMigrationNodeID: %s/%s: %s", tc.vc.name, tc.state, f.Type, f.Severity, f.Reason)
		}
	}
}

// A failed clone of the migration engine: Longhorn clones its directory
// again, and before 1.10.2 may clone it twice and restart the migration
// engine for ever (Longhorn 1.9.0, explorer seed 27 state 87, one run of
// two). From 1.10.2 it deletes the extra clone itself.
func TestFailedCloneRecloned(t *testing.T) {
	for _, tc := range []struct {
		vc   versionCase
		warn bool
	}{
		{vcL14a, true},
		{versionCase{"1.9.0", "v1.9.0", false}, true},
		{vc110, true},
		{versionCase{"1.10.2", "v1.10.2", false}, false},
		{vc111, false},
	} {
		s := migrating(tc.vc, "vol")
		clone := s.replicasOf(s.engB)[1]
		clone.Spec.FailedAt = t0.Format(time.RFC3339)
		_, f := s.classify(t)
		if tc.warn {
			wantWarning(t, tc.vc.name, f, TypeMigrationInFlight, "replicas "+clone.Name+" of migration engine "+s.engB+" have failed")
		} else if f.Severity != SeverityInfo {
			t.Errorf("%s: %s/%s: %s", tc.vc.name, f.Type, f.Severity, f.Reason)
		}
	}
	s := migrating(versionCase{"1.9.0", "v1.9.0", false}, "vol")
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("no failed clone: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
	// no ticket on spec.nodeID: from 1.7 Longhorn detaches the volume and
	// cancels the migration (1.10.0, seed 35 state 83)
	s = migrating(vc110, "vol")
	s.replicasOf(s.engB)[1].Spec.FailedAt = t0.Format(time.RFC3339)
	s.withTickets(map[string]bool{})
	if _, f := s.classify(t); strings.Contains(f.Reason, "have failed") {
		t.Errorf("no ticket: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
}

// A csi ticket on a third node during a migration from 1.5: Longhorn
// confirms when the source has none and goes on into the next migration
// (1.12.0, explorer seed 27 state 65: parted in one run of two).
func TestTicketBeyondMigration(t *testing.T) {
	vc := versionCase{"1.12.0", "v1.12.0", false}
	s := migrating(vc, "vol")
	s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeB), csiTicket(s.vol, nodeC))
	_, f := s.classify(t)
	wantWarning(t, vc.name, f, TypeMigrationInFlight, "csi-attacher tickets ask for the volume on "+nodeC)
	s = migrating(vc, "vol")
	s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeA), csiTicket(s.vol, nodeB))
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("tickets on source and target: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
}

// A one-engine volume's migration request that no csi ticket asks for:
// Longhorn clears it, whatever else is wrong with the migration (1.5.3,
// seed 37 states 71 and 91).
func TestRequestCleared(t *testing.T) {
	for _, vc := range []versionCase{vcL15f, vc110} {
		s := migrating(vc, "vol")
		s.removeEngine(s.engB)
		s.removeReplicasOf(s.engB)
		s.volume().Status.Robustness = longhorn.RobustnessFaulted
		s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeA))
		_, f := s.classify(t)
		if f.Type != TypeMigrationInFlight || f.Severity != SeverityInfo || !strings.Contains(f.Reason, "clears the request") {
			t.Errorf("%s: %s/%s: %s", vc.name, f.Type, f.Severity, f.Reason)
		}
		s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeA), csiTicket(s.vol, nodeB))
		if _, f := s.classify(t); f.Severity != SeverityWarning {
			t.Errorf("%s, the target asked for: %s/%s: %s", vc.name, f.Type, f.Severity, f.Reason)
		}
	}
}

// Seed 37 on 1.12.0: an active engine with no node on an attached volume
// is put on its node before the finish (state 67, finished); a migration
// whose target is spec.nodeID itself, served elsewhere, never moves
// (state 79).
func TestSeed37On112(t *testing.T) {
	vc := versionCase{"1.12.0", "v1.12.0", false}
	s := rolledBack(vc)
	s.engine(s.engA).Spec.NodeID = ""
	s.withTickets(map[string]bool{}, csiTicket(s.vol, s.volume().Spec.NodeID))
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("active engine without a node, ticket on the node: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
	s = migrating(vc, "vol")
	s.volume().Spec.NodeID = nodeB
	s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeB))
	_, f := s.classify(t)
	wantWarning(t, "target is spec.nodeID", f, TypeMigrationInFlight, "both name "+nodeB)
}

// A migration whose active engine has no active replica never gets ready
// (Longhorn 1.10.0, explorer seed 33 state 112).
func TestSourceWithoutReplicas(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL16, {"1.10.0", "v1.10.0", false}} {
		s := migrating(vc, "vol")
		if _, f := s.classify(t); f.Severity != SeverityInfo {
			t.Fatalf("%s: a plain migration: %s/%s: %s", vc.name, f.Type, f.Severity, f.Reason)
		}
		s.setReplicasActive(s.engA, false)
		_, f := s.classify(t)
		wantWarning(t, vc.name, f, TypeMigrationInFlight, "has no active replica of its own")
	}
}

// A migration Longhorn confirms by itself (no csi ticket left on the
// source) on 1.12, whose confirm clean-up can delete replicas stored
// active: Longhorn 1.12.0 lost a replica in explorer seed 33 state 6.
func TestConfirmingOn112(t *testing.T) {
	for _, c := range []struct {
		vc   versionCase
		warn bool
	}{{versionCase{"1.12.0", "v1.12.0", false}, true}, {versionCase{"1.11.1", "v1.11.1", false}, false}} {
		s := migrating(c.vc, "vol")
		s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeB))
		_, f := s.classify(t)
		if got := f.Type == TypeMigrationInFlight && f.Severity == SeverityWarning && strings.Contains(f.Reason, "confirms the migration to "+nodeB+" by itself"); got != c.warn {
			t.Errorf("%s, ticket on the target only: %s/%s: %s", c.vc.name, f.Type, f.Severity, f.Reason)
		}
	}
	vc := versionCase{"1.12.0", "v1.12.0", false}
	s := migrating(vc, "vol")
	s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeA), csiTicket(s.vol, nodeB))
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("tickets on source and target: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
}

// An engine being deleted whose replicas are active beside another
// engine's on the same directories, while a migration is requested: the
// migration start deletes them as replicas of an unknown engine once the
// engine is gone (Longhorn 1.10.0, explorer seed 33 state 24, wiped).
func TestPendingCleanupDeletedBesideMigration(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f, {"L15f-1.10.0", "v1.10.0", false}} {
		s := pendingScenario(vc, time.Second)
		s.setReplicasActive(s.engA, true)
		s.volume().Spec.MigrationNodeID = nodeC
		_, f := s.classify(t)
		wantWarning(t, vc.name, f, TypePendingCleanup, "set spec.active=false on "+s.replicasOf(s.engA)[0].Name)
		s.setReplicasActive(s.engA, false)
		if _, f := s.classify(t); strings.Contains(f.Reason, "migration start deletes them") {
			t.Errorf("%s, set inactive: %s/%s: %s", vc.name, f.Type, f.Severity, f.Reason)
		}
	}
}

// A faulted volume mid-migration: Longhorn detaches it and, with tickets
// on both nodes, leaves it detached (Longhorn 1.10.0, explorer seed 33
// state 5). Before 1.7 the robustness rule has said so already.
func TestFaultedInFlight(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL16, {"1.10.0", "v1.10.0", false}} {
		s := migrating(vc, "vol")
		s.volume().Status.Robustness = longhorn.RobustnessFaulted
		_, f := s.classify(t)
		if f.Type != TypeMigrationInFlight || f.Severity != SeverityWarning {
			t.Errorf("%s: %s/%s: %s", vc.name, f.Type, f.Severity, f.Reason)
		}
	}
	s := migrating(versionCase{"1.10.0", "v1.10.0", false}, "vol")
	s.volume().Status.Robustness = longhorn.RobustnessFaulted
	_, f := s.classify(t)
	wantWarning(t, "1.10.0", f, TypeMigrationInFlight, "the volume is faulted during the migration")
}

// A migration Longhorn reverts (its engine is on neither the migration
// node nor unset) deletes every replica of that engine: one active on a
// directory of its own loses that copy (Longhorn 1.9.0–1.12.0, explorer
// seed 35 state 2). With the engine on the migration node, or the copy
// inactive, nothing is said.
func TestRevertTakesCopy(t *testing.T) {
	const nodeD = "node-d"
	for _, vc := range []versionCase{vcL14a, {"1.12.0", "v1.12.0", false}} {
		build := func(node string, active bool) *scenario {
			s := migrating(vc, "vol")
			s.engine(s.engB).Spec.NodeID = node
			r := replica(s.vol, s.vol+"-r-own", node, s.engB, active)
			s.st.Replicas = append(s.st.Replicas, r)
			return s
		}
		_, f := build(nodeD, true).classify(t)
		wantWarning(t, vc.name+": engine off the migration node", f, TypeMigrationInFlight, "vol-r-own, active on node-d:vol-node-d")
		for _, c := range []struct {
			what   string
			node   string
			active bool
		}{{"engine on the migration node", nodeB, true}, {"copy inactive", nodeD, false}} {
			if _, f := build(c.node, c.active).classify(t); f.Severity != SeverityInfo && strings.Contains(f.Reason, "reverts this migration") {
				t.Errorf("%s: %s: %s/%s: %s", vc.name, c.what, f.Type, f.Severity, f.Reason)
			}
		}
	}
}

// Longhorn 1.4.3 (explorer seed 45 state 37): two engines, no migration,
// status.currentNodeID empty, the active engine running on node-a and no
// engine on spec.nodeID node-b: the attach will not start the active
// engine on node-b and the finish finds no engine there. With the active
// engine stopped, or on 1.5+, this rule says nothing.
func TestFinishWithActiveEngineElsewhereOn14(t *testing.T) {
	build := func(vc versionCase, state string) *scenario {
		s := migrating(vc, "vol")
		v := s.volume()
		v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID = "", ""
		v.Spec.NodeID, v.Status.CurrentNodeID = nodeB, ""
		b := s.engine(s.engB)
		b.Spec.NodeID, b.Status.CurrentState = "", longhorn.StateStopped
		s.engine(s.engA).Status.CurrentState = state
		return s
	}
	_, f := build(vcL14a, longhorn.StateRunning).classify(t)
	wantWarning(t, "1.4, active engine running elsewhere", f, TypeMigrationFinishing, "must detach first")
	for _, c := range []struct {
		what  string
		vc    versionCase
		state string
	}{{"1.4, active engine stopped", vcL14a, longhorn.StateStopped}, {"1.6", vcL16, longhorn.StateRunning}} {
		if _, f := build(c.vc, c.state).classify(t); strings.Contains(f.Reason, "must detach first") {
			t.Errorf("%s: %s/%s: %s", c.what, f.Type, f.Severity, f.Reason)
		}
	}
}

// Seed 45 on 1.4.3 (the 5,000-state run): a pending clean-up whose
// deleting engine's replicas are active beside the kept engine's (state
// 175: left active naming the removed engine), whose migration request
// targets the kept engine's node (378: the migration engine goes beside
// it), whose kept engine has no replica (510: it never starts); and a
// migration whose clone is being deleted (374: cloned again and again).
func TestSeed45On143(t *testing.T) {
	s := pendingScenario(vcL14a, time.Second)
	s.setReplicasActive(s.engA, true)
	_, f := s.classify(t)
	wantWarning(t, "175: deleting engine's replicas active beside", f, TypePendingCleanup, "leaves them active, naming it")

	s = pendingScenario(vcL14a, time.Second)
	s.volume().Spec.MigrationNodeID = nodeB
	_, f = s.classify(t)
	wantWarning(t, "378: request onto the kept engine's node", f, TypePendingCleanup, "is the node the active engine")

	// as in the state: the deleting engine's replicas being deleted too
	s = pendingScenario(vcL14a, time.Second)
	s.removeReplicasOf(s.engB)
	gone := metav1.Now()
	for _, r := range s.replicasOf(s.engA) {
		r.DeletionTimestamp = &gone
	}
	_, f = s.classify(t)
	wantWarning(t, "510: kept engine without replicas", f, TypePendingCleanup, "has no replica of its own")

	s = migrating(vcL14a, "vol")
	clone := s.replicasOf(s.engB)[0]
	clone.DeletionTimestamp = &gone
	_, f = s.classify(t)
	wantWarning(t, "374: clone being deleted", f, TypeMigrationInFlight, clone.Name+" of migration engine")
}

// Before 1.5, a migration in flight whose active engine is not where
// spec.nodeID and status.currentNodeID say the volume runs: Longhorn 1.4.3
// held it and never got it ready (explorer seed 45 states 1442, 1521,
// 1824, 2095 among others). Not judged from 1.5.
func TestInFlightSourceOffNode(t *testing.T) {
	s := migrating(vcL14a, "vol")
	s.volume().Spec.NodeID = nodeC
	_, f := s.classify(t)
	wantWarning(t, "spec.nodeID on a third node", f, TypeMigrationInFlight, "holds this migration as it is")
	s = migrating(vcL14a, "vol")
	s.engine(s.engA).Spec.NodeID = nodeC
	_, f = s.classify(t)
	wantWarning(t, "active engine off the current node", f, TypeMigrationInFlight, "holds this migration as it is")
	s = migrating(vcL14a, "vol")
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("a regular migration: %s: %s", f.Severity, f.Reason)
	}
	s = migrating(vcL15f, "vol")
	s.volume().Spec.NodeID = nodeC
	if _, f := s.classify(t); strings.Contains(f.Reason, "holds this migration as it is") {
		t.Errorf("1.5: %s", f.Reason)
	}
}

// Before 1.5, a pending clean-up whose one engine left is off spec.nodeID:
// with one engine Longhorn 1.4.3 finished nothing and kept the volume
// attached there (explorer seed 45 states 985, 1359, 2155, 1077).
func TestPendingCleanupKeptOffNode(t *testing.T) {
	build := func(keptOn string) *scenario {
		s := stuck(vcL14a, "vol")
		ts := ago(3 * time.Second)
		s.engine(s.engA).DeletionTimestamp = &ts
		s.engine(s.engB).Spec.NodeID = keptOn
		s.setReplicasActive(s.engA, false)
		s.setReplicasActive(s.engB, true)
		return s
	}
	_, f := build(nodeA).classify(t)
	wantWarning(t, "kept engine on the old node", f, TypePendingCleanup, "the one engine left")
	if _, f := build(nodeB).classify(t); f.Severity != SeverityInfo || f.Action != ActionWait {
		t.Errorf("kept engine on spec.nodeID: %s/%s: %s", f.Severity, f.Action, f.Reason)
	}
}

// A migration in flight beside a replica still active for an engine that
// no longer exists: Longhorn's preparation of the migration deletes it
// with its directory (1.4.3 wiped it from explorer seed 45 states 2596 and
// 2798; the deletion is in every release's prepareReplicasAndEngineForMigration).
func TestInFlightDanglingReplica(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f, vcL16} {
		s := migrating(vc, "vol")
		gone := replica("vol", "vol-r-0000gone", nodeC, "vol-e-gone", true)
		s.st.Replicas = append(s.st.Replicas, gone)
		_, f := s.classify(t)
		if f.Type != TypeMigrationInFlight || f.Severity != SeverityCritical || f.Action != ActionNone || !strings.Contains(f.Reason, "vol-r-0000gone are active for an engine that no longer exists") {
			t.Errorf("%s: %s/%s/%s: %s", vc.name, f.Type, f.Severity, f.Action, f.Reason)
		}
		// failed, Longhorn skips it
		s.st.Replicas[len(s.st.Replicas)-1].Spec.FailedAt = "2026-01-01T00:00:00Z"
		if _, f := s.classify(t); f.Severity == SeverityCritical {
			t.Errorf("%s failed: %s", vc.name, f.Reason)
		}
	}
}

// A pending clean-up beside a replica already active for an engine that is
// gone: 1.4.3 left it so once the clean-up was done (explorer seed 45
// state 1848).
func TestPendingCleanupBesideDangling(t *testing.T) {
	s := stuck(vcL14a, "vol")
	ts := ago(3 * time.Second)
	s.engine(s.engA).DeletionTimestamp = &ts
	s.setReplicasActive(s.engA, false)
	s.setReplicasActive(s.engB, true)
	s.st.Replicas = append(s.st.Replicas, replica("vol", "vol-r-0000gone", nodeC, "vol-e-gone", true))
	_, f := s.classify(t)
	wantWarning(t, "1.4", f, TypePendingCleanup, "vol-r-0000gone are active for an engine that no longer exists")
}

// Before 1.5 the pick may take the engine on status.pendingNodeID: with
// it off spec.nodeID the volume stays attached there (explorer seed 45
// state 2101 on 1.4.3).
func TestNoActiveEnginePickedOnPendingNode(t *testing.T) {
	s := rolledBack(vcL14a)
	v := s.volume()
	v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.PendingNodeID = nodeC, nodeC, nodeB
	s.engine(s.engA).Spec.Active = false
	_, f := s.classify(t)
	wantWarning(t, "engine on the pending node", f, TypeNoActiveEngine, "on status.pendingNodeID node-b")
	v.Status.PendingNodeID = ""
	if _, f := s.classify(t); strings.Contains(f.Reason, "status.pendingNodeID") {
		t.Errorf("no pending node: %s", f.Reason)
	}
}

// Before 1.5, a finish whose only engine on spec.nodeID is being deleted:
// once it is gone one engine is left off spec.nodeID (explorer seed 45
// state 1127 on 1.4.3), unless the active engine's replicas have all
// failed, when Longhorn's auto-salvage attaches the volume again on
// spec.nodeID (seed 29 state 163 converged).
func TestFinishOnlyDeletingOnNode(t *testing.T) {
	s := migrating(vcL14a, "vol")
	v := s.volume()
	v.Spec.NodeID, v.Spec.MigrationNodeID, v.Status.CurrentNodeID = nodeB, "", nodeA
	ts := ago(3 * time.Second)
	s.engine(s.engB).DeletionTimestamp = &ts
	_, f := s.classify(t)
	wantWarning(t, "deleting on the node", f, TypeMigrationFinishing, "but for ones being deleted")
	for _, r := range s.replicasOf(s.engA) {
		r.Spec.FailedAt = "2026-01-01T00:00:00Z"
	}
	if _, f := s.classify(t); strings.Contains(f.Reason, "but for ones being deleted") {
		t.Errorf("replicas failed (auto-salvage): %s", f.Reason)
	}
}
