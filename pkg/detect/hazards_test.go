package detect

import (
	"strings"
	"testing"
	"time"

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

// A clone of the extra engine active on its original's directory while
// Longhorn finishes a rollback: 1.5.3 wiped the directory (seed 27 state
// 71) or left the clone active for the removed engine (state 83).
func TestFinishingActiveCloneBeside(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f, vcL16} {
		s := rolledBack(vc)
		clone := s.replicasOf(s.engB)[0]
		clone.Spec.Active = true
		_, f := s.classify(t)
		wantWarning(t, vc.name, f, TypeMigrationFinishing, "set spec.active=false on "+clone.Name)
		if strings.Contains(f.Reason, "do not roll back") {
			t.Errorf("%s: a finish is no migration in flight: %s", vc.name, f.Reason)
		}
		clone.Spec.DataDirectoryName = "vol-elsewhere"
		if _, f := s.classify(t); f.Severity != SeverityInfo {
			t.Errorf("%s: own directory: %s: %s", vc.name, f.Severity, f.Reason)
		}
	}
	// in flight, the migration engine not yet on spec.migrationNodeID
	// (seed 27 state 87): it is the engine a rollback removes all the same
	s := migrating(vcL15f, "vol")
	s.engine(s.engB).Spec.NodeID = nodeA
	s.replicasOf(s.engB)[1].Spec.Active = true
	_, f := s.classify(t)
	wantWarning(t, "in flight", f, TypeMigrationInFlight, "do not roll back")
}

// On 1.5 Longhorn's finish takes an engine on status.pendingNodeID when
// none is on spec.nodeID, after moving status.currentNodeID to
// spec.nodeID: the two part for good (1.5.3, seed 27 state 92). From 1.6
// pendingNodeID does not count, and no engine is found at all.
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
	// 1.4.3 recovered such states by itself (seed 28's confirm-parked
	// fixtures)
	if _, f := build(vcL14a).classify(t); f.Severity != SeverityInfo {
		t.Errorf("1.4: %s: %s", f.Severity, f.Reason)
	}
	// from 1.6 the pending node does not count; with the confirm's
	// currentMigrationNodeID set no engine is found at all
	s := build(vcL16)
	s.volume().Status.CurrentMigrationNodeID = nodeB
	_, f = s.classify(t)
	wantWarning(t, vcL16.name, f, TypeMigrationFinishing, "cannot find the current engine")
}

// Tickets on two nodes while a rollback is finished: a new migration races
// the clean-up (1.5.3 ended seed 27 state 55 detached half-way).
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
