package detect

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// confirmedOntoOneNode: Longhorn 1.5.3 after the source engine crashed
// mid-migration (internal/realtest): it confirmed toward B while detaching
// and attached the old, active engine on B, beside the migration engine.
func confirmedOntoOneNode(vc versionCase, vol string) *scenario {
	s := migrating(vc, vol)
	v := s.volume()
	v.Spec.NodeID, v.Spec.MigrationNodeID, v.Status.CurrentNodeID = nodeB, "", nodeB
	s.engine(s.engA).Spec.NodeID = nodeB
	for i := range s.st.Replicas {
		s.st.Replicas[i].Spec.HealthyAt = "2026-01-01T00:00:00Z"
	}
	return s
}

func TestFamilyEnginesOnOneNode(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vc153} {
		t.Run(vc.name, func(t *testing.T) {
			s := confirmedOntoOneNode(vc, "vol-on")
			_, f := s.classify(t)
			if f.Type != TypeEnginesOnOneNode || f.Severity != SeverityWarning || f.Family == nil {
				t.Fatalf("got %s/%s: %s", f.Type, f.Severity, f.Reason)
			}
			if f.Action != ActionDelete || f.Keep != s.engA || len(f.Stale) != 1 || f.Stale[0] != s.engB {
				t.Fatalf("action %s keep %s stale %v: %s", f.Action, f.Keep, f.Stale, f.Reason)
			}
			if roleOf(f, s.engA) != "keep" || roleOf(f, s.engB) != "stale" || !strings.Contains(f.Reason, "second new active engine") {
				t.Errorf("roles %q/%q, reason %s", roleOf(f, s.engA), roleOf(f, s.engB), f.Reason)
			}
			if steps := strings.Join(f.Family.Steps, "\n"); !strings.Contains(steps, "delete engines.longhorn.io "+s.engB) {
				t.Errorf("steps lack the delete of %s:\n%s", s.engB, steps)
			}
		})
	}
	refused := func(name string, vc versionCase, mutate func(*scenario), failed string) {
		t.Run(name, func(t *testing.T) {
			s := confirmedOntoOneNode(vc, "vol-on")
			mutate(s)
			_, f := s.classify(t)
			if f.Type != TypeEnginesOnOneNode || f.Action.Writes() {
				t.Fatalf("got %s, action %s: %s", f.Type, f.Action, f.Reason)
			}
			if got := firstFailedName(f); got != failed {
				t.Errorf("first failed check %q, want %q: %s", got, failed, f.Reason)
			}
			if !f.Severity.NeedsAttention() {
				t.Errorf("severity %s", f.Severity)
			}
		})
	}
	refused("not proven on 1.10", vc110, func(*scenario) {}, CheckRepairProven)
	refused("the extra owns an active replica", vc153, func(s *scenario) { s.replicasOf(s.engB)[0].Spec.Active = true }, CheckExtraIdle)
	refused("the active engine is not running", vc153, func(s *scenario) { s.engine(s.engA).Status.CurrentState = longhorn.StateError }, CheckOneServingEngine)
	// Longhorn's switch activates only replicas with healthyAt: without
	// one, the engine kept would lose them
	refused("the kept engine's replicas never healthy", vc153, func(s *scenario) {
		for _, r := range s.replicasOf(s.engA) {
			r.Spec.HealthyAt = ""
		}
	}, CheckOneServingEngine)
	refused("no active engine", vc153, func(s *scenario) { s.engine(s.engA).Spec.Active = false }, CheckOneServingEngine)

	notThis := func(name string, vc versionCase, mutate func(*scenario)) {
		t.Run(name, func(t *testing.T) {
			s := confirmedOntoOneNode(vc, "vol-on")
			mutate(s)
			if _, f := s.classify(t); f.Type == TypeEnginesOnOneNode {
				t.Errorf("reported: %s", f.Reason)
			}
		})
	}
	// an ordinary confirm being finished: the old engine still on A
	notThis("old engine on the source", vc153, func(s *scenario) { s.engine(s.engA).Spec.NodeID = nodeA; s.volume().Status.CurrentNodeID = nodeA })
	// a migration in flight: Longhorn does not switch engines yet
	notThis("migration requested", vc153, func(s *scenario) { s.volume().Spec.MigrationNodeID = nodeC })
	// an engine upgrade pending: processMigration skips the volume, which
	// is the upgrade deadlock's to report
	notThis("upgrade pending", vc153, func(s *scenario) { s.volume().Spec.EngineImage = "longhornio/longhorn-engine:v9.9.9" })
	notThis("faulted", vc153, func(s *scenario) { s.volume().Status.Robustness = longhorn.RobustnessFaulted })
	// not migratable: processMigration never runs
	notThis("not migratable", vc153, func(s *scenario) { s.volume().Spec.Migratable = false })
	// from 1.8 an engine being deleted is not a candidate
	notThis("extra being deleted on 1.10", vc110, func(s *scenario) {
		e := s.engine(s.engB)
		e.DeletionTimestamp = s.engine(s.engA).CreationTimestamp.DeepCopy()
	})
}
