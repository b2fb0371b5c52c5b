package detect

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Healthy: at most one active engine, no pending cleanup.
func TestHealthy(t *testing.T) {
	for _, vc := range allVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := healthy(vc, "vol")
			res, _ := s.classify(t)
			if len(res.Findings) != 0 {
				t.Fatalf("healthy volume has findings: %s", mustJSON(res.Findings))
			}
			if res.Volumes != 1 || res.Healthy != 1 || res.NeedsAttention() {
				t.Errorf("Volumes=%d Healthy=%d NeedsAttention=%t, want 1 1 false", res.Volumes, res.Healthy, res.NeedsAttention())
			}
		})
	}
}

// A detached volume with one inactive engine, and a volume whose engine is
// inactive while detaching, are not findings either.
func TestHealthyDetached(t *testing.T) {
	for _, vc := range allVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := healthy(vc, "vol")
			v := s.volume()
			v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.State = "", "", longhorn.VolumeStateDetached
			e := s.engine(s.engA)
			e.Spec.NodeID, e.Spec.Active, e.Spec.DesireState = "", false, longhorn.StateStopped
			e.Status.CurrentState, e.Status.Endpoint = longhorn.StateStopped, ""
			res, _ := s.classify(t)
			if len(res.Findings) != 0 || res.Healthy != 1 {
				t.Fatalf("detached volume: %s", mustJSON(res))
			}
		})
	}
}

// NoActiveEngine: Longhorn makes the one engine on the volume's node the
// current one by itself (a wait); with no engine there, or two, it cannot
// (a warning). Judged by Longhorn 1.4.3's own controller in the explorer.
func TestNoActiveEngineWhileAttached(t *testing.T) {
	for _, vc := range allVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := healthy(vc, "vol")
			s.engine(s.engA).Spec.Active = false
			// from 1.5 the volume stays attached only while a ticket asks
			// for it there: without one, Longhorn detaches it as it is
			// (seed 29 state 34 on 1.5.3); from 1.7 it picks the engine
			// while it detaches (1.10.0, seed 33 state 16)
			if ver := vc.parsed(); ver.HasVolumeAttachments() && !ver.FinishesMigrationWhenDetached() {
				if _, f := s.classify(t); f.Severity != SeverityWarning {
					t.Errorf("no ticket on the node: got %s/%s, want a warning", f.Type, f.Severity)
				}
				s.withTickets(map[string]bool{}, csiTicket("vol", s.volume().Spec.NodeID))
			}
			_, f := s.classify(t)
			if f.Type != TypeNoActiveEngine || f.Severity != SeverityInfo || f.Action != ActionWait || f.Keep != s.engA {
				t.Fatalf("engine on the node: got %s/%s/%s keep %q, want NoActiveEngine/info/wait keep %s", f.Type, f.Severity, f.Action, f.Keep, s.engA)
			}

			// none of its replicas active: it never starts (seed 29
			// state 13 on 1.4.3)
			s.setReplicasActive(s.engA, false)
			if _, f := s.classify(t); f.Severity != SeverityWarning {
				t.Errorf("engine without an active replica: got %s/%s, want a warning", f.Type, f.Severity)
			}
			s.setReplicasActive(s.engA, true)

			s.engine(s.engA).Spec.NodeID = nodeC
			res, f := s.classify(t)
			if f.Type != TypeNoActiveEngine || f.Severity != SeverityWarning || f.Action != ActionNone {
				t.Fatalf("no engine on the node: got %s/%s/%s, want NoActiveEngine/warning/none", f.Type, f.Severity, f.Action)
			}
			if !res.NeedsAttention() || res.Healthy != 0 {
				t.Errorf("NeedsAttention=%t Healthy=%d", res.NeedsAttention(), res.Healthy)
			}

			// the one engine on status.currentNodeID, spec.nodeID on
			// another node: before 1.5 the pick leaves the volume attached
			// there, its engine off spec.nodeID (seed 45 state 114 on 1.4.3)
			if ver := vc.parsed(); ver.Known() && !ver.AtLeast(1, 5, 0) {
				s.engine(s.engA).Spec.NodeID = nodeA
				s.volume().Spec.NodeID = nodeB
				if _, f := s.classify(t); f.Type != TypeNoActiveEngine || f.Severity != SeverityWarning || !strings.Contains(f.Reason, "off spec.nodeID") {
					t.Errorf("engine on currentNodeID, spec.nodeID elsewhere: got %s/%s: %s", f.Type, f.Severity, f.Reason)
				}
				s.volume().Spec.NodeID = nodeA
			}

			// a confirm's two engines, neither active: on 1.4 spec.nodeID
			// decides for a migratable volume
			s = migrating(vc, "vol")
			v := s.volume()
			v.Spec.NodeID, v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID = nodeB, "", ""
			if vc.parsed().HasVolumeAttachments() {
				s.withTickets(map[string]bool{}, csiTicket("vol", nodeB))
			}
			s.engine(s.engA).Spec.Active = false
			// its own replicas still inactive: whether Longhorn hands them
			// over before it removes the other engine depends on timing
			// (seed 28 state 147 on 1.4.3)
			if _, f := s.classify(t); f.Type != TypeNoActiveEngine || f.Severity != SeverityWarning {
				t.Errorf("confirm, no engine active, its replicas inactive: got %s/%s, want a warning", f.Type, f.Severity)
			}
			s.setReplicasActive(s.engB, true)
			_, f = s.classify(t)
			if ver := vc.parsed(); ver.Known() && !ver.AtLeast(1, 5, 0) {
				if f.Type != TypeNoActiveEngine || f.Action != ActionWait || f.Keep != s.engB {
					t.Errorf("confirm, no engine active: got %s/%s/%s keep %q, want wait keep %s", f.Type, f.Severity, f.Action, f.Keep, s.engB)
				}
			} else if f.Type != TypeNoActiveEngine || f.Severity != SeverityWarning {
				// from 1.5 the pick fails with an engine on each of
				// spec.nodeID and status.currentNodeID (1.10.0, seed 33
				// state 130)
				t.Errorf("confirm, no engine active, engines on spec.nodeID and currentNodeID: got %s/%s/%s, want a warning", f.Type, f.Severity, f.Action)
			}
			// not migratable, one engine on the volume's node: Longhorn
			// picks it and never removes the other (1.10.0, seed 33
			// state 75)
			v.Spec.Migratable = false
			v.Status.CurrentNodeID = nodeB
			if _, f := s.classify(t); f.Type != TypeNoActiveEngine || f.Severity != SeverityWarning || !strings.Contains(f.Reason, "not migratable") {
				t.Errorf("rwo, one engine on the node: got %s/%s: %s", f.Type, f.Severity, f.Reason)
			}
			v.Status.CurrentNodeID = nodeA
			// not migratable: both nodes count, two engines there, no pick
			if _, f := s.classify(t); f.Type != TypeNoActiveEngine || f.Severity != SeverityWarning {
				t.Errorf("rwo, engines on spec.nodeID and currentNodeID: got %s/%s", f.Type, f.Severity)
			}

			// the other engine deleted with its replicas still active for
			// it: Longhorn activates the one left and leaves them
			// (Longhorn 1.11.1, seed 27 state 15), a warning naming them
			v.Spec.Migratable = true
			s.removeEngine(s.engA)
			_, f = s.classify(t)
			if f.Type != TypeNoActiveEngine || f.Severity != SeverityWarning || f.Action != ActionNone || f.Keep != s.engB ||
				!strings.Contains(f.Reason, "stay active for engine "+s.engA) {
				t.Errorf("replicas of a deleted engine: got %s/%s/%s keep %q: %s", f.Type, f.Severity, f.Action, f.Keep, f.Reason)
			}
		})
	}
}

// MigrationInFlight: a live migration that has not been confirmed.
func TestMigrationInFlight(t *testing.T) {
	for _, vc := range allVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := migrating(vc, "vol")
			res, f := s.classify(t)
			if f.Type != TypeMigrationInFlight || f.Severity != SeverityInfo || f.Action != ActionNone {
				t.Fatalf("got %s/%s/%s, want MigrationInFlight/info/none; %s", f.Type, f.Severity, f.Action, f.Reason)
			}
			if res.NeedsAttention() {
				t.Error("a migration in flight needs attention")
			}
			if res.Healthy != 0 || res.Volumes != 1 {
				t.Errorf("Healthy=%d Volumes=%d", res.Healthy, res.Volumes)
			}
			if got := roleOf(f, s.engB); got != "migration" {
				t.Errorf("role of the migration engine = %q, want migration", got)
			}
			if got := roleOf(f, s.engA); got != "" {
				t.Errorf("role of the current engine = %q, want none", got)
			}
			if len(f.Stale) != 0 || f.Stale == nil {
				t.Errorf("Stale = %#v, want empty non-nil", f.Stale)
			}
			if !strings.Contains(f.Reason, nodeB) {
				t.Errorf("reason does not name the target: %s", f.Reason)
			}
		})
	}
}

// The migration engine has just been created (nodeID "" and stopped): still
// in flight, and the engine is marked as the migration engine.
func TestMigrationInFlightEngineNotPlaced(t *testing.T) {
	s := migrating(vcL14a, "vol")
	e := s.engine(s.engB)
	e.Spec.NodeID, e.Spec.DesireState, e.Status.CurrentState, e.Status.Endpoint = "", longhorn.StateStopped, longhorn.StateStopped, ""
	_, f := s.classify(t)
	if f.Type != TypeMigrationInFlight || f.Action != ActionNone || roleOf(f, s.engB) != "migration" {
		t.Fatalf("got %s/%s role %q", f.Type, f.Action, roleOf(f, s.engB))
	}
}

// The source engine crashed during the migration: Longhorn reverts it and
// detaches the volume (explorer E15 on 1.5.3).
func TestMigrationInFlightSourceDown(t *testing.T) {
	s := migrating(vcL15f, "vol")
	s.engine(s.engA).Status.CurrentState = longhorn.StateError
	_, f := s.classify(t)
	if f.Type != TypeMigrationInFlight || f.Severity != SeverityWarning || f.Action != ActionNone ||
		!strings.Contains(f.Reason, "active engine "+s.engA+" is error") {
		t.Fatalf("got %s/%s/%s: %s", f.Type, f.Severity, f.Action, f.Reason)
	}
}

// A clone of the migration engine active on its original's directory:
// not the shape Longhorn creates, and a rollback would delete it with the
// directory (explorer E15 on 1.5.3).
func TestMigrationInFlightActiveClone(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f} {
		s := migrating(vc, "vol")
		clone := s.replicasOf(s.engB)[0]
		clone.Spec.Active = true
		_, f := s.classify(t)
		if f.Type != TypeMigrationInFlight || f.Severity != SeverityWarning || f.Action != ActionNone {
			t.Fatalf("%s: got %s/%s/%s: %s", vc.name, f.Type, f.Severity, f.Action, f.Reason)
		}
		if !strings.Contains(f.Reason, "set spec.active=false on "+clone.Name) || !strings.Contains(f.Reason, "do not roll back") {
			t.Errorf("%s: reason %s", vc.name, f.Reason)
		}
		// on a directory of its own it harms nothing here
		clone.Spec.DataDirectoryName = "vol-elsewhere"
		if _, f := s.classify(t); f.Severity != SeverityInfo {
			t.Errorf("%s: own directory: %s: %s", vc.name, f.Severity, f.Reason)
		}
	}
}

// v1.12+ v2 switchover: two engines are expected while switchoverState is set.
func TestV2SwitchoverInFlight(t *testing.T) {
	s := migrating(vcV2, "vol")
	v := s.volume()
	v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID = "", ""
	v.Spec.EngineNodeID = nodeB
	v.Status.SwitchoverState = "switching-over"
	_, f := s.classify(t)
	if f.Type != TypeMigrationInFlight || f.Severity != SeverityInfo || f.Action != ActionNone {
		t.Fatalf("got %s/%s/%s", f.Type, f.Severity, f.Action)
	}
	if !strings.Contains(f.Reason, "switching-over") {
		t.Errorf("reason does not name the switchover state: %s", f.Reason)
	}
}

// MigrationFinishing (1.5+): spec.migrationNodeID cleared, currentMigrationNodeID still
// set, one active engine: confirm or rollback finishing.
func TestMigrationFinishing(t *testing.T) {
	for _, vc := range []versionCase{vcL15a, vcL15f, vcL16, vcV2} {
		for _, confirm := range []bool{true, false} {
			name := vc.name + "/rollback"
			if confirm {
				name = vc.name + "/confirm"
			}
			t.Run(name, func(t *testing.T) {
				s := migrating(vc, "vol")
				v := s.volume()
				v.Spec.MigrationNodeID = ""
				v.Status.CurrentMigrationNodeID = nodeB
				if confirm {
					// Old engine already gone, the new one active, replicas not yet flipped.
					v.Spec.NodeID, v.Status.CurrentNodeID = nodeB, nodeB
					s.removeEngine(s.engA)
					s.engine(s.engB).Spec.Active = true
				} else {
					s.removeEngine(s.engB)
					s.removeReplicasOf(s.engB)
				}
				res, f := s.classify(t)
				if f.Type != TypeMigrationFinishing || f.Severity != SeverityInfo || f.Action != ActionWait {
					t.Fatalf("got %s/%s/%s, want MigrationFinishing/info/wait: %s", f.Type, f.Severity, f.Action, f.Reason)
				}
				if res.NeedsAttention() {
					t.Error("NeedsAttention for a finishing migration")
				}
				if !strings.Contains(f.Reason, "currentMigrationNodeID") {
					t.Errorf("reason: %s", f.Reason)
				}
			})
		}
	}
}

// A confirm being finished that Longhorn does not finish cleanly (explorer,
// seed 27 states 4 and 22 on 1.5.3).
func TestMigrationFinishingHazards(t *testing.T) {
	finishingOn := func(vc versionCase) *scenario {
		s := migrating(vc, "vol")
		v := s.volume()
		v.Spec.MigrationNodeID, v.Spec.NodeID = "", nodeB
		s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeB))
		return s
	}
	finishing := func() *scenario { return finishingOn(vcL15f) }
	// not yet attached again: the attach puts the active engine on node-b
	// beside the migration engine
	s := finishing()
	s.volume().Status.CurrentNodeID = ""
	_, f := s.classify(t)
	if f.Type != TypeMigrationFinishing || f.Severity != SeverityWarning || !strings.Contains(f.Reason, "beside engine "+s.engB) {
		t.Errorf("currentNodeID empty: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
	// from 1.7 Longhorn finishes the confirm before it attaches again
	// (Longhorn 1.11.1, seed 27 state 4): an ordinary finish
	for _, rel := range []string{"v1.7.0", "v1.11.1"} {
		s := finishingOn(versionCase{"L15f-" + rel, rel, false})
		s.volume().Status.CurrentNodeID = ""
		if _, f := s.classify(t); f.Type != TypeMigrationFinishing || f.Severity != SeverityInfo || f.Action != ActionWait {
			t.Errorf("%s, currentNodeID empty: %s/%s/%s: %s", rel, f.Type, f.Severity, f.Action, f.Reason)
		}
	}
	// 1.4.3 went both ways (seed 27 state 4, seed 31 state 2): a warning
	// that says so
	s14 := migrating(vcL14a, "vol")
	s14.volume().Spec.MigrationNodeID, s14.volume().Spec.NodeID, s14.volume().Status.CurrentNodeID = "", nodeB, ""
	if _, f := s14.classify(t); f.Severity != SeverityWarning || !strings.Contains(f.Reason, "either finishes it or removes the old engine") {
		t.Errorf("1.4, currentNodeID empty: %s: %s", f.Severity, f.Reason)
	}
	// attached on node-a with no engine left on spec.nodeID (the migration
	// engine deleted): Longhorn's finish finds no current engine at every
	// sync (1.5.3, longhorn#7833's delete step), on every 1.5+ release
	for _, vc := range []versionCase{vcL15f, {"L15f-1.11.1", "v1.11.1", false}} {
		s := finishingOn(vc)
		s.volume().Status.CurrentNodeID = nodeA
		s.removeEngine(s.engB)
		if _, f := s.classify(t); f.Type != TypeMigrationFinishing || f.Severity != SeverityWarning || f.Action != ActionNone ||
			!strings.Contains(f.Reason, "cannot find the current engine for the switching") {
			t.Errorf("%s, no engine on spec.nodeID: %s/%s/%s: %s", vc.name, f.Type, f.Severity, f.Action, f.Reason)
		}
	}
	// attached: an ordinary finish
	s = finishing()
	s.volume().Status.CurrentNodeID = nodeB
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("ordinary finish: %s: %s", f.Severity, f.Reason)
	}
	// the engine kept is stopped
	s = finishing()
	s.volume().Status.CurrentNodeID = nodeB
	s.engine(s.engA).Status.CurrentState = longhorn.StateStopped
	if _, f := s.classify(t); f.Severity != SeverityWarning || !strings.Contains(f.Reason, "is stopped, not running") {
		t.Errorf("engine kept stopped: %s: %s", f.Severity, f.Reason)
	}
	// no ticket asks for the volume: it detaches, which ends it (state 0)
	s.st.VolumeAttachments = nil
	if _, f := s.classify(t); f.Severity != SeverityInfo {
		t.Errorf("engine kept stopped, no ticket: %s: %s", f.Severity, f.Reason)
	}
}

// A migration in flight with no active engine (seed 27 state 16 on 1.5.3).
func TestMigrationInFlightNoActiveEngine(t *testing.T) {
	s := migrating(vcL15f, "vol")
	s.engine(s.engA).Spec.Active = false
	_, f := s.classify(t)
	if f.Type != TypeMigrationInFlight || f.Severity != SeverityWarning || !strings.Contains(f.Reason, "no engine of the volume is active") {
		t.Errorf("%s/%s: %s", f.Type, f.Severity, f.Reason)
	}
}

// No migration, one active engine and an inactive leftover: Longhorn's own
// confirm/rollback branch removes it.
func TestExtraInactiveEngine(t *testing.T) {
	for _, vc := range allVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := migrating(vc, "vol")
			v := s.volume()
			v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID = "", ""
			_, f := s.classify(t)
			if f.Type != TypeMigrationFinishing || f.Action != ActionWait || f.Keep != s.engA || f.Severity != SeverityInfo {
				t.Fatalf("got %s/%s keep=%q", f.Type, f.Action, f.Keep)
			}
			if roleOf(f, s.engA) != "keep" {
				t.Errorf("role of %s = %q", s.engA, roleOf(f, s.engA))
			}
		})
	}
}

// pendingScenario: a confirm finished on B and the old engine on A waits for
// its finalizer with spec.active still true; replicas already flipped.
func pendingScenario(vc versionCase, age time.Duration) *scenario {
	s := stuck(vc, "vol")
	s.volume().Status.CurrentMigrationNodeID = ""
	ea := s.engine(s.engA)
	ts := ago(age)
	ea.DeletionTimestamp = &ts
	s.setReplicasActive(s.engA, false)
	s.setReplicasActive(s.engB, true)
	return s
}

// PendingCleanup: an active engine waits for its finalizer.
func TestPendingCleanup(t *testing.T) {
	for _, vc := range allVersions {
		t.Run(vc.name, func(t *testing.T) {
			t.Run("young", func(t *testing.T) {
				s := pendingScenario(vc, 2*time.Minute)
				res, f := s.classify(t)
				if f.Type != TypePendingCleanup || f.Severity != SeverityInfo || f.Action != ActionWait {
					t.Fatalf("got %s/%s/%s, want PendingCleanup/info/wait: %s", f.Type, f.Severity, f.Action, f.Reason)
				}
				if res.NeedsAttention() {
					t.Error("a young pending cleanup needs attention")
				}
				if f.Age == nil || f.Age.Duration != 2*time.Minute {
					t.Errorf("Age = %v, want 2m", f.Age)
				}
				if f.Keep != s.engB || roleOf(f, s.engB) != "keep" {
					t.Errorf("Keep = %q role %q, want %s", f.Keep, roleOf(f, s.engB), s.engB)
				}
				if !strings.Contains(f.Reason, s.engA) || !strings.Contains(f.Reason, longhorn.Finalizer) {
					t.Errorf("reason: %s", f.Reason)
				}
			})
			t.Run("old", func(t *testing.T) {
				s := pendingScenario(vc, 30*time.Minute)
				res, f := s.classify(t)
				if f.Type != TypePendingCleanup || f.Severity != SeverityWarning || f.Action != ActionWait {
					t.Fatalf("got %s/%s/%s, want PendingCleanup/warning/wait", f.Type, f.Severity, f.Action)
				}
				if f.Age == nil || f.Age.Duration != 30*time.Minute {
					t.Errorf("Age = %v, want 30m", f.Age)
				}
				if !res.NeedsAttention() {
					t.Error("an old pending cleanup does not need attention")
				}
				if !strings.Contains(f.Reason, nodeA) {
					t.Errorf("reason does not name the owner node: %s", f.Reason)
				}
			})
			t.Run("inverted", func(t *testing.T) {
				// A stale engine deleted on 1.3/1.4 with the replica flip never run.
				s := pendingScenario(vc, 2*time.Minute)
				s.setReplicasActive(s.engA, true)
				s.setReplicasActive(s.engB, false)
				res, f := s.classify(t)
				// Inert while the engine exists (every sync stops at the BUG
				// error): fix sets the flags right before it is gone.
				want := ActionSetReplicas
				if !vc.parsed().Known() || notRepairedOn(vc.parsed(), s.volume()) != "" {
					want = ActionWait
				}
				if f.Type != TypePendingCleanup || f.Severity != SeverityCritical || f.Action != want {
					t.Fatalf("got %s/%s/%s, want PendingCleanup/critical/%s: %s", f.Type, f.Severity, f.Action, want, f.Reason)
				}
				if !res.NeedsAttention() || !strings.Contains(f.Reason, "inverted") {
					t.Errorf("NeedsAttention=%t reason=%s", res.NeedsAttention(), f.Reason)
				}
				if want == ActionSetReplicas {
					assertFlip(t, f, s)
				}
			})
		})
	}
}

// A pending clean-up whose survivor is not on spec.nodeID: before 1.5
// Longhorn removes the engine and then keeps spec.nodeID and
// status.currentNodeID apart for good (explorer E2 on 1.4.3).
func TestPendingCleanupStuckOnceGone(t *testing.T) {
	s := pendingScenario(vcL14a, 2*time.Minute)
	s.volume().Spec.NodeID = nodeA
	_, f := s.classify(t)
	if f.Type != TypePendingCleanup || f.Severity != SeverityWarning || f.Action != ActionNone {
		t.Fatalf("got %s/%s/%s, want PendingCleanup/warning/none: %s", f.Type, f.Severity, f.Action, f.Reason)
	}
	if !strings.HasPrefix(f.Reason, "stuck once it is gone") || f.Family == nil || f.Family.Doc != FamilyDoc+"#confirm-without-engine" {
		t.Errorf("reason %s, family %+v", f.Reason, f.Family)
	}
	// spec.nodeID on the survivor's node: the ordinary clean-up after a confirm
	s = pendingScenario(vcL14a, 2*time.Minute)
	if _, f := s.classify(t); f.Severity != SeverityInfo || f.Action != ActionWait {
		t.Errorf("ordinary clean-up: %s/%s: %s", f.Severity, f.Action, f.Reason)
	}
	// 1.5+: status.currentMigrationNodeID keeps the migration going
	s = pendingScenario(vcL15f, 2*time.Minute)
	s.volume().Spec.NodeID = nodeA
	if _, f := s.classify(t); f.Severity != SeverityInfo || f.Action != ActionWait {
		t.Errorf("1.5: %s/%s: %s", f.Severity, f.Action, f.Reason)
	}
}

// A pending clean-up with no other active engine: once it is gone Longhorn
// must take the engine on the volume's node; one in error it cannot, and
// Longhorn 1.5.3 then removed the active replicas and wiped every
// directory (explorer E16, seed 27 state 8).
func TestPendingCleanupNoSurvivor(t *testing.T) {
	s := pendingScenario(vcL15f, 2*time.Minute)
	s.withTickets(map[string]bool{}, csiTicket(s.vol, nodeB))
	eb := s.engine(s.engB)
	eb.Spec.Active, eb.Status.CurrentState = false, longhorn.StateError
	_, f := s.classify(t)
	if f.Type != TypePendingCleanup || f.Severity != SeverityWarning || f.Action != ActionNone ||
		!strings.Contains(f.Reason, "no other engine is active") {
		t.Fatalf("got %s/%s/%s, want PendingCleanup/warning/none: %s", f.Type, f.Severity, f.Action, f.Reason)
	}
	// running with its active replicas and the ticket on its node: Longhorn
	// takes it
	eb.Status.CurrentState = longhorn.StateRunning
	if _, f := s.classify(t); f.Severity != SeverityInfo || f.Action != ActionWait {
		t.Errorf("engine picked: %s/%s: %s", f.Severity, f.Action, f.Reason)
	}
}

func TestPendingCleanupThreshold(t *testing.T) {
	tests := []struct {
		age, threshold time.Duration
		want           Severity
	}{
		{9 * time.Minute, 0, SeverityInfo}, // default 10m
		{11 * time.Minute, 0, SeverityWarning},
		{2 * time.Minute, time.Minute, SeverityWarning},
		{2 * time.Minute, -time.Minute, SeverityInfo}, // non-positive = default
		{time.Hour, 2 * time.Hour, SeverityInfo},
		{-time.Minute, 0, SeverityInfo}, // deletionTimestamp after Now (clock skew)
	}
	for _, tt := range tests {
		s := pendingScenario(vcL14a, tt.age)
		res := Classify(s.st, Options{PendingThreshold: tt.threshold})
		if len(res.Findings) != 1 {
			t.Fatalf("findings: %s", mustJSON(res.Findings))
		}
		f := res.Findings[0]
		if f.Severity != tt.want {
			t.Errorf("age %s threshold %s: severity %s, want %s", tt.age, tt.threshold, f.Severity, tt.want)
		}
		if f.Age == nil || f.Age.Duration < 0 {
			t.Errorf("age %s: Age = %v", tt.age, f.Age)
		}
	}
}

// Two pending engines: the age is the oldest deletion.
func TestPendingCleanupOldest(t *testing.T) {
	s := pendingScenario(vcL14a, 3*time.Minute)
	// Created last, deleted first: the age follows the deletion, not the creation.
	ts := ago(20 * time.Minute)
	third := s.withThird(nodeC, time.Minute)
	third.DeletionTimestamp = &ts
	_, f := s.classify(t)
	if f.Type != TypePendingCleanup || f.Age == nil || f.Age.Duration != 20*time.Minute || f.Severity != SeverityWarning {
		t.Fatalf("got %s age %v severity %s", f.Type, f.Age, f.Severity)
	}
	for _, n := range []string{s.engA, third.Name} {
		if !strings.Contains(f.Reason, n) {
			t.Errorf("reason does not name %s: %s", n, f.Reason)
		}
	}
}

// MultipleActiveEngines: the #6642 stuck state on every release class.
func TestTwoActiveEngines(t *testing.T) {
	tests := []struct {
		vc         versionCase
		action     Action
		reasonHas  string
		allChecked bool // every precondition passes
	}{
		{vcL13, ActionDeactivate, "spec.active=false", true},
		{vcL14a, ActionDeactivate, "spec.active=false", true},
		{vcL14f, ActionDeactivate, "stuck before an upgrade", true},
		{vcL15a, ActionDelete, "delete", true},
		{vcL15f, ActionDeactivate, "stuck before an upgrade", true},
		{vcL16, ActionDeactivate, "stuck before an upgrade", true},
		{vcUnknown, ActionNone, "the Longhorn version is unknown", false},
		{vcV2, ActionNone, "fix does not repair v2 volumes", true},
	}
	for _, tt := range tests {
		t.Run(tt.vc.name, func(t *testing.T) {
			s := stuck(tt.vc, "vol")
			res, f := s.classify(t)
			if f.Type != TypeMultipleActiveEngines || f.Severity != SeverityCritical {
				t.Fatalf("got %s/%s, want MultipleActiveEngines/critical", f.Type, f.Severity)
			}
			if f.Action != tt.action {
				t.Fatalf("action %s, want %s: %s", f.Action, tt.action, f.Reason)
			}
			if !strings.Contains(f.Reason, tt.reasonHas) {
				t.Errorf("reason does not contain %q: %s", tt.reasonHas, f.Reason)
			}
			if !strings.Contains(f.Reason, "BUG: found the second active engine") {
				t.Errorf("reason does not quote the BUG error: %s", f.Reason)
			}
			if !res.NeedsAttention() || res.Healthy != 0 {
				t.Errorf("NeedsAttention=%t Healthy=%d", res.NeedsAttention(), res.Healthy)
			}
			if f.Keep != s.engB {
				t.Errorf("Keep = %q, want %q (engine on B)", f.Keep, s.engB)
			}
			if !reflect.DeepEqual(f.Stale, []string{s.engA}) {
				t.Errorf("Stale = %v, want [%s] (engine on A)", f.Stale, s.engA)
			}
			if roleOf(f, s.engB) != "keep" || roleOf(f, s.engA) != "stale" {
				t.Errorf("roles: %s=%q %s=%q", s.engB, roleOf(f, s.engB), s.engA, roleOf(f, s.engA))
			}
			if tt.vc.v2 {
				// v2.go: no repair, the steps by hand instead.
				if len(f.Preconditions) != 0 || len(f.Steps) < 4 {
					t.Errorf("v2: %d preconditions, steps %q", len(f.Preconditions), f.Steps)
				}
				if ef := f.Evidence.EngineFrontends; len(ef) != 1 || ef[0].ConnectedTo != f.Evidence.Engines[1].Address {
					t.Errorf("v2 frontend evidence: %s", mustJSON(f.Evidence))
				}
				return
			}
			if len(f.Preconditions) != len(allChecks) {
				t.Fatalf("%d preconditions, want %d: %s", len(f.Preconditions), len(allChecks), mustJSON(f.Preconditions))
			}
			for i, c := range f.Preconditions {
				if c.Name != allChecks[i] {
					t.Errorf("precondition %d is %q, want %q", i, c.Name, allChecks[i])
				}
				if c.Detail == "" {
					t.Errorf("precondition %q has no detail", c.Name)
				}
			}
			if tt.allChecked {
				if failed := firstFailedName(f); failed != "" {
					t.Errorf("precondition %q failed: %s", failed, mustJSON(f.Preconditions))
				}
				if f.Refused() {
					t.Error("Refused() with all preconditions OK")
				}
			} else if !f.Refused() {
				t.Error("Refused() = false with a failed precondition")
			}
			if (f.Action == ActionDeactivate || f.Action == ActionDelete) && f.Refused() {
				t.Error("acting although a precondition failed")
			}
			// Evidence carries the volume fields the decision rests on.
			ev := f.Evidence
			if ev.NodeID != nodeB || ev.CurrentNodeID != nodeB || ev.MigrationNodeID != "" || len(ev.Engines) != 2 || len(ev.Replicas) != 4 {
				t.Errorf("evidence: %s", mustJSON(ev))
			}
			if tt.vc.v2 && (ev.DataEngine != longhorn.DataEngineV2 || ev.CurrentEngineNodeID != nodeB) {
				t.Errorf("v2 evidence: %s", mustJSON(ev))
			}
		})
	}
}

// The stale engine is the older one; the survivor note says so when not.
func TestTwoActiveEnginesEvidenceOrder(t *testing.T) {
	for _, vc := range []versionCase{vcL14a, vcL15f} {
		s := stuck(vc, "vol")
		_, f := s.classify(t)
		if len(f.Evidence.Engines) != 2 || f.Evidence.Engines[0].Name != s.engA || f.Evidence.Engines[1].Name != s.engB {
			t.Errorf("%s: evidence engines not oldest first: %s", vc.name, mustJSON(f.Evidence.Engines))
		}
		c, _ := findCheck(f, chkStale)
		if strings.Contains(c.Detail, "newer than the survivor") {
			t.Errorf("%s: stale engine reported newer: %s", vc.name, c.Detail)
		}
	}
	// Stale engine created after the survivor.
	s := stuck(vcL14a, "vol")
	s.engine(s.engA).CreationTimestamp = ago(time.Minute)
	_, f := s.classify(t)
	c, _ := findCheck(f, chkStale)
	if !strings.Contains(c.Detail, "newer than the survivor") || !c.OK {
		t.Errorf("newer stale engine: %+v", c)
	}
	if f.Action != ActionDeactivate {
		t.Errorf("a newer stale engine changed the action to %s", f.Action)
	}
}

// The survivor of a v2 volume on 1.12+ is on its engine node
// (spec.engineNodeID), not on spec.nodeID (the frontend's node).
func TestTwoActiveEnginesV2EngineNode(t *testing.T) {
	s := stuck(vcV2, "vol")
	v := s.volume()
	v.Spec.EngineNodeID, v.Status.CurrentEngineNodeID = nodeC, nodeC
	s.engine(s.engA).Spec.NodeID = nodeB // the frontend node
	s.engine(s.engB).Spec.NodeID = nodeC // the engine (target) node
	_, f := s.classify(t)
	if f.Keep != s.engB || !reflect.DeepEqual(f.Stale, []string{s.engA}) || f.Action != ActionNone {
		t.Fatalf("keep %q stale %v action %s", f.Keep, f.Stale, f.Action)
	}
	if !strings.Contains(f.Reason, "13951") {
		t.Errorf("reason does not cite the v2 variant: %s", f.Reason)
	}
}

// Three active engines: both others are stale.
func TestThreeActiveEngines(t *testing.T) {
	for _, vc := range affectedVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := stuck(vc, "vol")
			c := s.withThird(nodeC, 2*time.Hour, "vol-r-aaaa0002")
			_, f := s.classify(t)
			want := map[string]bool{s.engA: true, c.Name: true}
			if f.Keep != s.engB || len(f.Stale) != 2 || !want[f.Stale[0]] || !want[f.Stale[1]] {
				t.Fatalf("keep %q stale %v", f.Keep, f.Stale)
			}
			if f.Action == ActionNone {
				t.Errorf("no action: %s", f.Reason)
			}
			for _, n := range f.Stale {
				if roleOf(f, n) != "stale" {
					t.Errorf("role of %s = %q", n, roleOf(f, n))
				}
			}
		})
	}
}

// MultipleActiveEngines refused: each failed precondition, on each affected
// version.
func TestTwoActiveEnginesRefused(t *testing.T) {
	type refusal struct {
		name       string
		mutate     func(s *scenario)
		check      string // the first precondition that must fail
		detailHas  string
		onlyL15a   bool
		skipL15a   bool
		noSurvivor bool     // Keep cannot be determined
		alsoFail   []string // later checks that must fail too
	}
	tests := []refusal{
		{
			name:      "spec.nodeID empty (#4827)",
			mutate:    func(s *scenario) { s.volume().Spec.NodeID = "" },
			check:     chkCurrent,
			detailHas: "spec.nodeID is empty",
		},
		{
			name:      "currentNodeID differs from spec.nodeID",
			mutate:    func(s *scenario) { s.volume().Spec.NodeID = nodeA },
			check:     chkCurrent,
			detailHas: `status.currentNodeID="node-b" spec.nodeID="node-a"`,
		},
		{
			name:       "currentNodeID empty",
			mutate:     func(s *scenario) { s.volume().Status.CurrentNodeID = "" },
			check:      chkCurrent,
			detailHas:  "currentNodeID is empty",
			noSurvivor: true,
		},
		{
			name: "migration requested with two active engines, its engine created",
			mutate: func(s *scenario) {
				s.volume().Spec.MigrationNodeID = nodeC
				s.withEngine("vol-e-c0ffee00", nodeC, time.Minute, "c0ffee00", false)
			},
			check:     chkMigStarted,
			detailHas: nodeC,
		},
		{
			name:      "currentMigrationNodeID on another node",
			mutate:    func(s *scenario) { s.volume().Status.CurrentMigrationNodeID = nodeC },
			check:     chkNoMigFly,
			detailHas: nodeC,
		},
		{
			name:      "currentMigrationNodeID set before 1.5",
			mutate:    func(s *scenario) { s.volume().Status.CurrentMigrationNodeID = nodeB },
			check:     chkNoMigFly,
			detailHas: nodeB,
			skipL15a:  true,
		},
		{
			name:      "currentMigrationNodeID is the old node",
			mutate:    func(s *scenario) { s.volume().Status.CurrentMigrationNodeID = nodeA },
			check:     chkNoMigFly,
			detailHas: nodeA,
			onlyL15a:  true,
		},
		{
			name:      "survivor not running",
			mutate:    func(s *scenario) { s.engine(s.engB).Status.CurrentState = longhorn.StateError },
			check:     chkSurvivor,
			detailHas: "state=\"error\"",
		},
		{
			name:      "survivor starting",
			mutate:    func(s *scenario) { s.engine(s.engB).Status.CurrentState = longhorn.StateStarting },
			check:     chkSurvivor,
			detailHas: "starting",
		},
		{
			name:      "survivor without endpoint",
			mutate:    func(s *scenario) { s.engine(s.engB).Status.Endpoint = "" },
			check:     chkSurvivor,
			detailHas: `endpoint=""`,
		},
		{
			name: "survivor without RW replicas",
			mutate: func(s *scenario) {
				e := s.engine(s.engB)
				for r := range e.Status.ReplicaModeMap {
					e.Status.ReplicaModeMap[r] = longhorn.ModeWO
				}
			},
			check:     chkSurvivor,
			detailHas: "RW replicas=0",
		},
		{
			name: "survivor being deleted",
			mutate: func(s *scenario) {
				ts := ago(time.Minute)
				s.engine(s.engB).DeletionTimestamp = &ts
				// A second stale engine keeps two engines active.
				s.withThird(nodeC, 2*time.Hour, "vol-r-aaaa0002")
			},
			check:     chkSurvivor,
			detailHas: "being deleted",
		},
		{
			name: "survivor not active",
			mutate: func(s *scenario) {
				s.engine(s.engB).Spec.Active = false
				s.withThird(nodeC, 2*time.Hour, "vol-r-aaaa0002")
			},
			check:     chkSurvivor,
			detailHas: "not active",
		},
		{
			name:       "two engines on the current node",
			mutate:     func(s *scenario) { s.engine(s.engA).Spec.NodeID = nodeB },
			check:      chkSurvivor,
			detailHas:  "2 engines",
			noSurvivor: true,
			alsoFail:   []string{chkStale},
		},
		{
			name: "an inactive third engine on the current node",
			mutate: func(s *scenario) {
				s.withThird(nodeB, time.Minute).Spec.Active = false
			},
			check:      chkSurvivor,
			detailHas:  "2 engines",
			noSurvivor: true,
		},
		{
			name:       "no engine on the current node",
			mutate:     func(s *scenario) { s.engine(s.engB).Spec.NodeID = nodeC },
			check:      chkSurvivor,
			detailHas:  "0 engines",
			noSurvivor: true,
		},
		{
			// Longhorn recomputes robustness from the survivor's modes in the
			// sync after the repair: no RW replica of its own, no confirm.
			name: "survivor has no RW replica of its own",
			mutate: func(s *scenario) {
				e := s.engine(s.engB)
				for r := range e.Status.ReplicaModeMap {
					e.Status.ReplicaModeMap[r] = longhorn.ModeERR
				}
				e.Status.ReplicaModeMap["vol-r-elsewhere"] = longhorn.ModeRW
			},
			check:     chkRobustness,
			detailHas: "0 RW",
		},
		{
			name:      "not migratable",
			mutate:    func(s *scenario) { s.volume().Spec.Migratable = false },
			check:     chkMigratable,
			detailHas: "spec.migratable=false",
		},
		{
			name:      "rwo",
			mutate:    func(s *scenario) { s.volume().Spec.AccessMode = longhorn.AccessModeRWO },
			check:     chkMigratable,
			detailHas: "rwo",
		},
		{
			name:      "attach pending on another node",
			mutate:    func(s *scenario) { s.volume().Status.PendingNodeID = nodeC },
			check:     chkPending,
			detailHas: nodeC,
		},
		{
			name: "a replica being deleted",
			mutate: func(s *scenario) {
				ts := ago(time.Minute)
				s.st.Replicas[0].DeletionTimestamp = &ts
			},
			check:     chkSettled,
			detailHas: "being deleted",
		},
		{
			name: "a replica active for an engine that is gone",
			mutate: func(s *scenario) {
				s.st.Replicas = append(s.st.Replicas, replica("vol", "vol-r-0000gone", nodeC, "vol-e-gone", true))
			},
			check:     chkSettled,
			detailHas: "active for engine",
		},
		{
			name: "engine upgrade pending",
			mutate: func(s *scenario) {
				v := s.volume()
				v.Spec.EngineImage, v.Spec.Image = imgNew, ""
				if s.vc.parsed().AtLeast(1, 6, 0) {
					v.Spec.Image = imgNew
				}
			},
			check:     chkUpgrade,
			detailHas: imgNew,
		},
	}
	for _, vc := range affectedVersions {
		for _, tt := range tests {
			if (tt.onlyL15a && vc.name != vcL15a.name) || (tt.skipL15a && vc.name == vcL15a.name) {
				continue
			}
			t.Run(vc.name+"/"+tt.name, func(t *testing.T) {
				s := stuck(vc, "vol")
				tt.mutate(s)
				_, f := s.classify(t)
				if f.Type != TypeMultipleActiveEngines || f.Severity != SeverityCritical {
					t.Fatalf("got %s/%s: %s", f.Type, f.Severity, f.Reason)
				}
				if f.Action != ActionNone {
					t.Fatalf("action %s despite %s: %s", f.Action, tt.name, mustJSON(f.Preconditions))
				}
				c, ok := findCheck(f, tt.check)
				if !ok || c.OK {
					t.Fatalf("check %q: present=%t ok=%t: %s", tt.check, ok, c.OK, mustJSON(f.Preconditions))
				}
				if got := firstFailedName(f); got != tt.check {
					t.Errorf("first failed check %q, want %q: %s", got, tt.check, mustJSON(f.Preconditions))
				}
				for _, name := range tt.alsoFail {
					if c, ok := findCheck(f, name); !ok || c.OK {
						t.Errorf("check %q passed: %s", name, mustJSON(f.Preconditions))
					}
				}
				if !strings.Contains(c.Detail, tt.detailHas) {
					t.Errorf("detail %q does not contain %q", c.Detail, tt.detailHas)
				}
				if c.Failure == "" || !strings.Contains(f.Reason, "not safe to repair because "+c.Failure) {
					t.Errorf("reason does not say what failed (%q): %s", c.Failure, f.Reason)
				}
				for _, other := range f.Preconditions {
					if other.OK && other.Failure != "" {
						t.Errorf("passed check %q carries a failure sentence %q", other.Name, other.Failure)
					}
				}
				if !f.Refused() {
					t.Error("Refused() = false")
				}
				if tt.noSurvivor {
					if f.Keep != "" || len(f.Stale) != 0 || f.Stale == nil {
						t.Errorf("keep %q stale %#v, want no survivor and empty Stale", f.Keep, f.Stale)
					}
				} else if f.Keep != s.engB {
					t.Errorf("Keep = %q, want %q", f.Keep, s.engB)
				}
				for _, n := range f.Stale {
					if n == f.Keep {
						t.Errorf("Keep %s is also stale", n)
					}
				}
			})
		}
	}
}

// Fixed releases repair a volume stuck before the upgrade exactly like the
// affected ones, refusing on the same preconditions; unknown, pre-1.3,
// 1.13+ and v2 volumes never act.
func TestTwoActiveEnginesOnFixedOrUnknown(t *testing.T) {
	refusing := map[string]func(*scenario){
		"spec.nodeID":    func(s *scenario) { s.volume().Spec.NodeID = "" },
		"survivor error": func(s *scenario) { s.engine(s.engB).Status.CurrentState = longhorn.StateError },
		"pending node":   func(s *scenario) { s.volume().Status.PendingNodeID = nodeA },
	}
	acting := map[string]func(*scenario){
		"as is": func(*scenario) {},
		// status.robustness is frozen while stuck; Longhorn recomputes it
		"faulted":       func(s *scenario) { s.volume().Status.Robustness = longhorn.RobustnessFaulted },
		"cmn = current": func(s *scenario) { s.volume().Status.CurrentMigrationNodeID = nodeB },
	}
	for _, vc := range []versionCase{vcL14f, vcL15f, vcL16, {"v1.9.0", "v1.9.0", false}, {"v1.10.0", "v1.10.0", false}, {"v1.11.1", "v1.11.1", false}, {"v1.12.1-v1", "v1.12.1", false}} {
		for name, m := range refusing {
			s := stuck(vc, "vol")
			m(s)
			if _, f := s.classify(t); f.Type != TypeMultipleActiveEngines || f.Action != ActionNone {
				t.Errorf("%s/%s: %s action %s", vc.name, name, f.Type, f.Action)
			}
		}
		for name, m := range acting {
			if name == "cmn = current" && !vc.parsed().HasCurrentMigrationNodeID() {
				continue
			}
			s := stuck(vc, "vol")
			m(s)
			_, f := s.classify(t)
			if f.Action != ActionDeactivate {
				t.Errorf("%s/%s: action %s: %s", vc.name, name, f.Action, f.Reason)
			}
			assertFlip(t, f, s)
		}
	}
	for _, vc := range []versionCase{vcUnknown, vcV2, {"v1.2.6", "v1.2.6", false}, {"v1.13.0", "v1.13.0", false}} {
		for name, m := range acting {
			s := stuck(vc, "vol")
			m(s)
			if _, f := s.classify(t); f.Type != TypeMultipleActiveEngines || f.Action != ActionNone {
				t.Errorf("%s/%s: %s action %s", vc.name, name, f.Type, f.Action)
			}
		}
	}
	// v1.2.6 with everything in order: known, but not a version this tool repairs.
	s := stuck(versionCase{"v1.2.6", "v1.2.6", false}, "vol")
	_, f := s.classify(t)
	if f.Refused() || !strings.Contains(f.Reason, "not one this tool repairs") {
		t.Errorf("v1.2.6: refused=%t reason %s", f.Refused(), f.Reason)
	}
	s = stuck(versionCase{"v1.13.0", "v1.13.0", false}, "vol")
	if _, f := s.classify(t); !strings.Contains(f.Reason, "not been proven") || !strings.Contains(f.Reason, "newest release proven: 1.12") || !strings.Contains(f.Reason, "docs/troubleshooting-two-active-engines.md") {
		t.Errorf("v1.13.0: reason %s", f.Reason)
	}
}

// 1.5.0/1.5.1 with currentMigrationNodeID empty (stuck on 1.4, upgraded):
// deleting would skip the confirm, so fix takes the safe path.
func TestL15aDeleteNeedsCurrentMigrationNode(t *testing.T) {
	for cm, want := range map[string]Action{nodeB: ActionDelete, "": ActionDeactivate, nodeA: ActionNone, nodeC: ActionNone} {
		s := stuck(vcL15a, "vol")
		s.volume().Status.CurrentMigrationNodeID = cm
		_, f := s.classify(t)
		if f.Action != want {
			t.Errorf("cm=%q: action %s, want %s: %s", cm, f.Action, want, f.Reason)
		}
	}
}

// assertFlip: the survivor's replicas are activated first, then every
// active replica of another engine deactivated; none repointed.
func assertFlip(t *testing.T, f Finding, s *scenario) {
	t.Helper()
	if len(f.ReplicaChanges) == 0 {
		t.Fatalf("no replica changes: %s", f.Reason)
	}
	seenOff := false
	for _, c := range f.ReplicaChanges {
		if c.FromEngine != c.ToEngine {
			t.Errorf("%s repointed from %s to %s", c.Replica, c.FromEngine, c.ToEngine)
		}
		switch {
		case c.ToEngine == s.engB && c.ToActive && !c.FromActive:
		case c.ToEngine != s.engB && !c.ToActive && c.FromActive:
			seenOff = true
		default:
			t.Errorf("unexpected change %+v", c)
		}
	}
	if h := prefixHazard(s.st.Version, s.engB, replicaPtrs(s.st.Replicas), f.ReplicaChanges); h != "" {
		t.Errorf("a stop between the writes is unsafe: %s: %+v", h, f.ReplicaChanges)
	}
	if !seenOff {
		t.Errorf("no replica of %s deactivated: %+v", s.engA, f.ReplicaChanges)
	}
}

// The documented delete applied on 1.3/1.4: a single active engine whose
// replicas are inactive (or gone) while replicas of the vanished engine stay
// active. fix points them at the remaining engine.
func TestInvertedReplicaFlags(t *testing.T) {
	for _, vc := range allVersions {
		t.Run(vc.name, func(t *testing.T) {
			cases := map[string]func(s *scenario){
				// Stale engine deleted on 1.4: the survivor's replicas are still inactive.
				"survivor replicas inactive": func(s *scenario) {},
				// cleanupCorruptedOrStaleReplicas already removed them.
				"survivor replicas gone": func(s *scenario) { s.removeReplicasOf(s.engB) },
			}
			for name, m := range cases {
				t.Run(name, func(t *testing.T) {
					s := stuck(vc, "vol")
					s.volume().Status.CurrentMigrationNodeID = ""
					s.removeEngine(s.engA) // replicas of a vanished engine remain active
					m(s)
					res, f := s.classify(t)
					want := ActionSetReplicas
					if notRepairedOn(vc.parsed(), s.volume()) != "" || !vc.parsed().Known() {
						want = ActionNone
					}
					if f.Type != TypeDanglingReplicas || f.Severity != SeverityCritical || f.Action != want {
						t.Fatalf("got %s/%s/%s, want DanglingReplicas/critical/%s: %s", f.Type, f.Severity, f.Action, want, f.Reason)
					}
					if f.Keep != s.engB || roleOf(f, s.engB) != "keep" {
						t.Errorf("Keep = %q", f.Keep)
					}
					if !strings.Contains(f.Reason, s.engA) || !strings.Contains(f.Reason, "no healthy or scheduled replica for starting") {
						t.Errorf("reason does not name the vanished engine or Longhorn's error: %s", f.Reason)
					}
					if want == ActionSetReplicas {
						for _, c := range f.ReplicaChanges {
							if c.FromEngine != s.engA || c.ToEngine != s.engB || !c.FromActive || !c.ToActive {
								t.Errorf("change %+v: want %s→%s, active kept", c, s.engA, s.engB)
							}
						}
						if len(f.ReplicaChanges) != len(s.replicasOf(s.engA)) {
							t.Errorf("%d changes for %d replicas of %s", len(f.ReplicaChanges), len(s.replicasOf(s.engA)), s.engA)
						}
					}
					if !res.NeedsAttention() {
						t.Error("inverted flags do not need attention")
					}
				})
			}
		})
	}
}

// Not inverted: leftovers that Longhorn cleans up on its own.
func TestNotInverted(t *testing.T) {
	cases := map[string]func(s *scenario){
		"inactive leftover replica of the current engine": func(s *scenario) {
			s.st.Replicas = append(s.st.Replicas, replica("vol", "vol-r-ffff0001", nodeB, s.engA, false))
		},
		"inactive replica of a vanished engine": func(s *scenario) {
			s.st.Replicas = append(s.st.Replicas, replica("vol", "vol-r-ffff0002", nodeB, "vol-e-gone", false))
		},
		"no replicas at all": func(s *scenario) { s.st.Replicas = nil },
	}
	for name, m := range cases {
		s := healthy(vcL14a, "vol")
		m(s)
		res, _ := s.classify(t)
		if len(res.Findings) != 0 {
			t.Errorf("%s: %s", name, mustJSON(res.Findings))
		}
	}
}

// Orphans: Engine CRs whose volume is gone, and engine processes with no CR.
func TestOrphans(t *testing.T) {
	raw := []byte(`{}`)
	build := func(vc versionCase) *scenario {
		s := healthy(vc, "vol")
		// An Engine CR for a deleted volume, found by spec.volumeName.
		s.st.Engines = append(s.st.Engines, engine(vc, "gone", "gone-e-0", nodeA, time.Hour))
		// ... and one found only by its label.
		byLabel := engine(vc, "gone2", "gone2-e-1a2b3c4d", nodeC, time.Hour)
		byLabel.Spec.VolumeName = ""
		s.st.Engines = append(s.st.Engines, byLabel)
		im := longhorn.InstanceManager{}
		im.Spec.NodeID = nodeB
		if vc.hasCMN() { // 1.5+ aio managers
			im.Name = "instance-manager-0123abcd"
			im.Spec.Type = "aio"
			im.Status.InstanceEngines = rawMap{
				s.engA: raw, "vanished-e-3": raw,
			}
			im.Status.InstanceReplicas = rawMap{"vol-r-aaaa0001": raw}
		} else { // ≤1.4 engine managers
			im.Name = "instance-manager-e-0123abcd"
			im.Spec.Type = "engine"
			im.Status.Instances = rawMap{s.engA: raw, "vanished-e-3": raw}
		}
		rim := longhorn.InstanceManager{}
		rim.Name = "instance-manager-r-0123abcd"
		rim.Spec = longhorn.InstanceManagerSpec{NodeID: nodeB, Type: "replica"}
		rim.Status.Instances = rawMap{"orphan-r-12345678": raw}
		s.st.InstanceManagers = []longhorn.InstanceManager{im, rim}
		return s
	}
	for _, vc := range allVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := build(vc)
			res := Classify(s.st, Options{})
			type key struct {
				vol string
				typ Type
			}
			got := map[key][]string{}
			var order []string
			for _, f := range res.Findings {
				got[key{f.Volume, f.Type}] = append(got[key{f.Volume, f.Type}], f.Stale...)
				order = append(order, f.Volume)
				if f.Severity != SeverityWarning || f.Action != ActionNone {
					t.Errorf("%s %s: %s/%s", f.Volume, f.Type, f.Severity, f.Action)
				}
				if len(f.Evidence.Engines) != 1 || f.Evidence.Engines[0].Role != "stale" || f.Evidence.Replicas == nil {
					t.Errorf("evidence: %s", mustJSON(f.Evidence))
				}
			}
			want := map[key][]string{
				{"gone", TypeOrphanEngine}:            {"gone-e-0"},
				{"gone2", TypeOrphanEngine}:           {"gone2-e-1a2b3c4d"},
				{"vanished", TypeOrphanEngineProcess}: {"vanished-e-3"},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("findings %v, want %v", got, want)
			}
			if !reflect.DeepEqual(order, []string{"gone", "gone2", "vanished"}) {
				t.Errorf("order %v", order)
			}
			if res.Volumes != 1 || res.Healthy != 1 || !res.NeedsAttention() {
				t.Errorf("Volumes=%d Healthy=%d NeedsAttention=%t", res.Volumes, res.Healthy, res.NeedsAttention())
			}
			for _, f := range res.Findings {
				if f.Type == TypeOrphanEngineProcess && (!strings.Contains(f.Reason, "instance-manager-") || f.Evidence.Engines[0].NodeID != nodeB) {
					t.Errorf("orphan process finding: %s", mustJSON(f))
				}
			}

			// SkipOrphans leaves all of them out.
			res = Classify(s.st, Options{SkipOrphans: true})
			if len(res.Findings) != 0 || res.Healthy != 1 {
				t.Errorf("SkipOrphans: %s", mustJSON(res.Findings))
			}
			// Instance managers not read: engine CR orphans only.
			s.st.InstanceManagersRead = false
			res = Classify(s.st, Options{})
			if len(res.Findings) != 2 {
				t.Fatalf("InstanceManagersRead=false: %s", mustJSON(res.Findings))
			}
			for _, f := range res.Findings {
				if f.Type != TypeOrphanEngine {
					t.Errorf("InstanceManagersRead=false reported %s", f.Type)
				}
			}
		})
	}
}

// An engine process whose volume still exists but whose Engine CR is gone
// (the stale engine of a fix, left in the old node's instance manager).
func TestOrphanProcessOfExistingVolume(t *testing.T) {
	s := healthy(vcL14a, "vol")
	im := longhorn.InstanceManager{}
	im.Name = "instance-manager-e-1"
	im.Spec = longhorn.InstanceManagerSpec{NodeID: nodeA, Type: "engine"}
	im.Status.Instances = rawMap{s.engA: []byte(`{}`), "vol-e-deadbeef": []byte(`{}`)}
	s.st.InstanceManagers = []longhorn.InstanceManager{im}
	res := Classify(s.st, Options{})
	if len(res.Findings) != 1 || res.Findings[0].Type != TypeOrphanEngineProcess || res.Findings[0].Volume != "vol" ||
		!reflect.DeepEqual(res.Findings[0].Stale, []string{"vol-e-deadbeef"}) {
		t.Fatalf("%s", mustJSON(res.Findings))
	}
	// The volume itself is still healthy.
	if res.Healthy != 1 {
		t.Errorf("Healthy = %d", res.Healthy)
	}
}

func TestVolumeOfEngine(t *testing.T) {
	tests := map[string]string{
		"vol-e-0":          "vol",
		"pvc-1-e-1a2b3c4d": "pvc-1",
		"my-e-vol-e-2":     "my-e-vol",
		"noengine":         "noengine",
		"-e-1":             "-e-1",
	}
	for in, want := range tests {
		if got := volumeOfEngine(in); got != want {
			t.Errorf("volumeOfEngine(%q) = %q, want %q", in, got, want)
		}
	}
}

// Several volumes: counts, order by volume name, NeedsAttention.
func TestResultOrderingAndCounts(t *testing.T) {
	vc := vcL14a
	st := newState(vc)
	add := func(s *scenario) {
		st.Volumes = append(st.Volumes, s.st.Volumes...)
		st.Engines = append(st.Engines, s.st.Engines...)
		st.Replicas = append(st.Replicas, s.st.Replicas...)
	}
	// Deliberately out of order.
	add(stuck(vc, "vol-d"))
	add(healthy(vc, "vol-a"))
	add(migrating(vc, "vol-c"))
	add(healthy(vc, "vol-e"))
	add(pendingScenario(vc, time.Minute)) // "vol"
	add(stuck(vc, "vol-b"))

	res := Classify(st, Options{})
	if res.Volumes != 6 || res.Healthy != 2 {
		t.Errorf("Volumes=%d Healthy=%d, want 6 2", res.Volumes, res.Healthy)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, f.Volume+":"+string(f.Type))
	}
	want := []string{
		"vol:" + string(TypePendingCleanup),
		"vol-b:" + string(TypeMultipleActiveEngines),
		"vol-c:" + string(TypeMigrationInFlight),
		"vol-d:" + string(TypeMultipleActiveEngines),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	if !res.NeedsAttention() {
		t.Error("NeedsAttention = false with critical findings")
	}

	// Info-only findings do not need attention.
	st2 := newState(vc)
	for _, s := range []*scenario{migrating(vc, "m1"), pendingScenario(vc, time.Minute), healthy(vc, "h")} {
		st2.Volumes = append(st2.Volumes, s.st.Volumes...)
		st2.Engines = append(st2.Engines, s.st.Engines...)
		st2.Replicas = append(st2.Replicas, s.st.Replicas...)
	}
	res2 := Classify(st2, Options{})
	if res2.NeedsAttention() || len(res2.Findings) != 2 || res2.Healthy != 1 {
		t.Errorf("info only: NeedsAttention=%t findings=%d healthy=%d", res2.NeedsAttention(), len(res2.Findings), res2.Healthy)
	}

	// Empty state.
	empty := Classify(newState(vc), Options{})
	if empty.Volumes != 0 || empty.Healthy != 0 || len(empty.Findings) != 0 || empty.NeedsAttention() {
		t.Errorf("empty: %+v", empty)
	}
}

func TestClassifyVolumeUnknownName(t *testing.T) {
	s := stuck(vcL14a, "vol")
	if f, ok := ClassifyVolume(s.st, "nope", Options{}); ok {
		t.Errorf("ClassifyVolume(nope) = %+v", f)
	}
}

// ClassifyVolume must not report orphans of other volumes.
func TestClassifyVolumeIgnoresOrphans(t *testing.T) {
	s := healthy(vcL14a, "vol")
	s.st.Engines = append(s.st.Engines, engine(vcL14a, "gone", "gone-e-0", nodeA, time.Hour))
	if f, ok := ClassifyVolume(s.st, "vol", Options{}); ok {
		t.Errorf("ClassifyVolume = %+v", f)
	}
}

func TestSeverityNeedsAttention(t *testing.T) {
	for s, want := range map[Severity]bool{SeverityInfo: false, SeverityWarning: true, SeverityCritical: true, "": false} {
		if s.NeedsAttention() != want {
			t.Errorf("%q.NeedsAttention() = %t", s, !want)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	d := Duration{12*time.Minute + 30*time.Second + 400*time.Millisecond}
	b, err := d.MarshalJSON()
	if err != nil || string(b) != `"12m30s"` {
		t.Errorf("MarshalJSON = %s, %v", b, err)
	}
}

// 1.5+ evidence carries the VolumeAttachment tickets, found by spec.volume
// or, failing that, by the object name; replicas are found by label too.
func TestEvidenceTicketsAndLabels(t *testing.T) {
	s := stuck(vcL15a, "vol")
	idA, idB := longhorn.CSITicketID("vol", nodeA), longhorn.CSITicketID("vol", nodeB)
	va := longhorn.VolumeAttachment{}
	va.Name = "vol" // spec.volume left empty on purpose
	va.Spec.AttachmentTickets = map[string]longhorn.AttachmentTicket{
		idA: {ID: idA, Type: longhorn.AttacherTypeCSI, NodeID: nodeA, Generation: 1},
		idB: {ID: idB, Type: longhorn.AttacherTypeCSI, NodeID: nodeB, Generation: 2},
	}
	va.Status.AttachmentTicketStatuses = map[string]longhorn.AttachmentTicketStatus{
		idA: {ID: idA, Satisfied: true, Generation: 1},
		idB: {ID: idB, Satisfied: true, Generation: 1}, // stale generation
	}
	other := longhorn.VolumeAttachment{}
	other.Name = "other"
	other.Spec.Volume = "other"
	s.st.VolumeAttachments = []longhorn.VolumeAttachment{va, other}
	s.st.Replicas[0].Spec.VolumeName = "" // only the longhornvolume label left
	_, f := s.classify(t)
	got := map[string]bool{}
	for _, tk := range f.Evidence.Tickets {
		if tk.Type != longhorn.AttacherTypeCSI {
			t.Errorf("ticket %+v", tk)
		}
		got[tk.NodeID] = tk.Satisfied
	}
	if want := map[string]bool{nodeA: true, nodeB: false}; !reflect.DeepEqual(got, want) {
		t.Errorf("tickets %v, want %v", got, want)
	}
	if len(f.Evidence.Replicas) != 4 {
		t.Errorf("replica found by label missing: %s", mustJSON(f.Evidence.Replicas))
	}
	if f.Action != ActionDelete {
		t.Errorf("tickets changed the action to %s", f.Action)
	}
}

// A refused repair says what failed, in words that read as the failure, not
// as the name of the check that passed elsewhere (issue #17).
func TestRefusalReadsAsTheFailure(t *testing.T) {
	s := stuck(vcL14a, "vol")
	s.st.Volumes[0].Spec.NodeID = ""
	_, f := s.classify(t)
	const want = "spec.nodeID is empty: Longhorn does not process this volume's engines (longhorn#4827)"
	c := f.FirstFailed()
	if c == nil || c.Name != CheckCurrentNode || c.Failure != want {
		t.Fatalf("first failed check %+v, want %q failing with %q", c, CheckCurrentNode, want)
	}
	if !strings.HasSuffix(f.Reason, "not safe to repair because "+want) {
		t.Errorf("reason %q does not end with the failure", f.Reason)
	}
	if strings.Contains(f.Reason, CheckCurrentNode) {
		t.Errorf("reason quotes the requirement as if it held: %s", f.Reason)
	}
}

// TestMigrationRequestWaitsOnRepair: a migration requested while two
// engines are active, that Longhorn has not started (no engine for it), does
// not block the repair: every sync fails on the two engines, so the request
// waits, and Longhorn starts it once one is active. The finding says so and
// names the node, for fix's verification.
func TestMigrationRequestWaitsOnRepair(t *testing.T) {
	for _, vc := range affectedVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := stuck(vc, "vol")
			s.volume().Spec.MigrationNodeID = nodeC
			_, f := s.classify(t)
			if f.Type != TypeMultipleActiveEngines || !f.Action.Writes() {
				t.Fatalf("got %s/%s action %s: %s", f.Type, f.Severity, f.Action, mustJSON(f.Preconditions))
			}
			if c, ok := findCheck(f, chkMigStarted); !ok || !c.OK || !strings.Contains(c.Detail, nodeC) {
				t.Errorf("check %q: %+v", chkMigStarted, c)
			}
			if got := f.PendingMigration(); got != nodeC {
				t.Errorf("PendingMigration() = %q, want %q", got, nodeC)
			}
			if !strings.Contains(f.Reason, "migration to "+nodeC+" requested meanwhile waits on the repair") {
				t.Errorf("reason: %s", f.Reason)
			}
		})
	}
}

// F2 beyond a dangling replica beside the survivor's: two dangling replicas
// of one data directory, or two active replicas of the survivor on one
// (explorer seed 45 states 2248 and 2727 on 1.4.3: repointing both left two
// active CRs on one directory, and Longhorn's next deletion wiped it). After
// the writes each directory has one active replica, the one not failed, and
// every deactivation comes before the first repoint.
func TestDanglingRepairLeavesOneActivePerDirectory(t *testing.T) {
	failed := func(r longhorn.Replica) longhorn.Replica {
		r.Spec.FailedAt = "2026-01-01T00:00:00Z"
		return r
	}
	cases := map[string]struct {
		add      func(s *scenario) []longhorn.Replica
		wantOff  string // the replica deactivated
		wantStay string // the replica left active on that directory
	}{
		"two dangling replicas of one directory": {
			add: func(s *scenario) []longhorn.Replica {
				return []longhorn.Replica{failed(replica("vol", "vol-r-0000dup1", nodeA, s.engA, true))}
			},
			wantOff: "vol-r-0000dup1",
		},
		"two active replicas of the survivor on one directory": {
			add: func(s *scenario) []longhorn.Replica {
				return []longhorn.Replica{
					failed(replica("vol", "vol-r-0000own1", "node-d", s.engB, true)),
					replica("vol", "vol-r-0000own2", "node-d", s.engB, true),
				}
			},
			wantOff: "vol-r-0000own1", wantStay: "vol-r-0000own2",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := stuck(vcL14a, "vol")
			s.volume().Status.CurrentMigrationNodeID = ""
			s.removeEngine(s.engA)
			s.st.Replicas = append(s.st.Replicas, c.add(s)...)
			_, f := s.classify(t)
			if f.Type != TypeDanglingReplicas || f.Action != ActionSetReplicas {
				t.Fatalf("got %s/%s: %s", f.Type, f.Action, f.Reason)
			}
			after := map[string]longhorn.Replica{}
			for _, r := range s.st.Replicas {
				after[r.Name] = r
			}
			repointed := false
			for _, ch := range f.ReplicaChanges {
				r := after[ch.Replica]
				r.Spec.EngineName, r.Spec.Active = ch.ToEngine, ch.ToActive
				after[ch.Replica] = r
				if ch.ToActive {
					repointed = true
				} else if repointed {
					t.Errorf("%s deactivated after a repoint: %+v", ch.Replica, f.ReplicaChanges)
				}
			}
			perDir := map[string][]string{}
			for _, r := range after {
				if r.Spec.Active {
					if r.Spec.EngineName != s.engB {
						t.Errorf("%s still active for %s", r.Name, r.Spec.EngineName)
					}
					perDir[r.Spec.NodeID+"/"+r.Spec.DataDirectoryName] = append(perDir[r.Spec.NodeID+"/"+r.Spec.DataDirectoryName], r.Name)
				}
			}
			for dir, names := range perDir {
				if len(names) > 1 {
					t.Errorf("%s: %d active replicas after the repair: %v", dir, len(names), names)
				}
			}
			if after[c.wantOff].Spec.Active {
				t.Errorf("%s (failed) left active: %+v", c.wantOff, f.ReplicaChanges)
			}
			if c.wantStay != "" && !after[c.wantStay].Spec.Active {
				t.Errorf("%s deactivated instead of the failed one", c.wantStay)
			}
			if !strings.Contains(f.Reason, c.wantOff) || !strings.Contains(f.Reason, "stays active") {
				t.Errorf("reason does not name %s: %s", c.wantOff, f.Reason)
			}
		})
	}
}

// An inactive replica of an engine that is gone does not hold the repair
// back: nothing uses it, its deletion keeps the directory, and with two
// engines active Longhorn never gets to the clean-up that removes it
// (explorer seed 45 state 1237 on 1.4.3: fix run again refused for good).
func TestInactiveReplicaOfGoneEngineSettled(t *testing.T) {
	s := stuck(vcL14a, "vol")
	s.st.Replicas = append(s.st.Replicas, replica("vol", "vol-r-0000gone", nodeC, "vol-e-gone", false))
	_, f := s.classify(t)
	if c, ok := findCheck(f, chkSettled); !ok || !c.OK {
		t.Errorf("settled check: present=%t ok=%t: %s", ok, c.OK, mustJSON(f.Preconditions))
	}
	if f.Refused() {
		t.Errorf("refused: %s", f.Reason)
	}
}
