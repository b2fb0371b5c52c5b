package detect

import (
	"strings"
	"testing"
)

// Two active replicas of the one engine on one data directory: fix
// deactivates the one the engine does not report in RW mode; with a
// migration requested it does not act; one of them inactive is Longhorn's
// own clean-up, nothing to report.
func TestSharedReplicaDirectory(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f, vcL16} {
		s := healthy(vc, "vol")
		dup := replica("vol", "vol-r-dup", nodeC, s.engA, true)
		s.st.Replicas = append(s.st.Replicas, dup)
		_, f := s.classify(t)
		if f.Type != TypeSharedReplicaDirectory || f.Severity != SeverityCritical || f.Action != ActionSetReplicas || f.Keep != s.engA {
			t.Fatalf("%s: got %s/%s/%s keep %s: %s", vc.name, f.Type, f.Severity, f.Action, f.Keep, f.Reason)
		}
		if len(f.ReplicaChanges) != 1 || f.ReplicaChanges[0].Replica != "vol-r-dup" || f.ReplicaChanges[0].ToActive || f.ReplicaChanges[0].ToEngine != s.engA {
			t.Errorf("%s: changes %+v, want vol-r-dup deactivated on %s", vc.name, f.ReplicaChanges, s.engA)
		}
		if !strings.Contains(f.Reason, "vol-r-aaaa0002 and vol-r-dup") {
			t.Errorf("%s: reason does not name the pair: %s", vc.name, f.Reason)
		}

		s.volume().Spec.MigrationNodeID = nodeB
		if _, f := s.classify(t); f.Type != TypeSharedReplicaDirectory || f.Action.Writes() || f.FirstFailed() == nil {
			t.Errorf("%s with a migration requested: %s/%s: %s", vc.name, f.Type, f.Action, f.Reason)
		}
		s.volume().Spec.MigrationNodeID = ""

		s.st.Replicas[len(s.st.Replicas)-1].Spec.Active = false
		if _, f := s.classify(t); f.Type != "" {
			t.Errorf("%s with the extra one inactive: %s/%s: %s", vc.name, f.Type, f.Severity, f.Reason)
		}
	}
}

// A finish whose engine kept has a clone and its original on one data
// directory (explorer seed 27 state 22 on 1.10.0–1.12.0, state 77 on
// 1.5.3): the finish makes both active, a warning; without the pair, a
// wait.
func TestFinishingSharedDirectory(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f, vcL16} {
		s := rolledBack(vc)
		clone := s.replicasOf(s.engB)[1]
		clone.Spec.EngineName = s.engA
		_, f := s.classify(t)
		wantWarning(t, vc.name, f, TypeMigrationFinishing, "share one data directory")
		clone.Spec.HealthyAt = ""
		if _, f := s.classify(t); f.Severity != SeverityInfo || f.Action != ActionWait {
			t.Errorf("%s never healthy: %s/%s: %s", vc.name, f.Severity, f.Action, f.Reason)
		}
	}
}

// No engine active, and the engine Longhorn picks has a clone and its
// original on one data directory: the pick's finish makes both active
// (Longhorn 1.12.0 wiped the directory, explorer seed 35 state 44).
func TestNoActiveEngineSharedDirectory(t *testing.T) {
	for _, vc := range []versionCase{vcL16, {"1.12.0", "v1.12.0", false}} {
		s := rolledBack(vc)
		s.engine(s.engA).Spec.Active = false
		if vc.parsed().HasVolumeAttachments() {
			s.withTickets(map[string]bool{}, csiTicket(s.vol, s.volume().Spec.NodeID))
		}
		if _, f := s.classify(t); f.Type != TypeNoActiveEngine || f.Severity != SeverityInfo {
			t.Fatalf("%s: %s/%s: %s", vc.name, f.Type, f.Severity, f.Reason)
		}
		s.replicasOf(s.engB)[1].Spec.EngineName = s.engA
		_, f := s.classify(t)
		wantWarning(t, vc.name, f, TypeNoActiveEngine, "share one data directory")
	}
}
