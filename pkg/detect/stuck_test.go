package detect

import (
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func setWantedImage(s *scenario, img string) {
	v := s.volume()
	if v.Spec.Image != "" {
		v.Spec.Image = img
	} else {
		v.Spec.EngineImage = img
	}
}

// TestUpgradeDeadlockReported (F3): a stuck volume whose engine upgrade is
// pending is refused with the deadlock and the manual steps, no longer
// "repair after it finishes" (it never finishes).
func TestUpgradeDeadlockReported(t *testing.T) {
	for _, ver := range []string{"v1.4.3", "v1.5.1", "v1.5.3", "v1.6.0", "v1.10.0"} {
		s := stuck(versionCase{name: ver, version: ver}, "vol")
		setWantedImage(s, imgNew)
		_, f := s.classify(t)
		c := f.FirstFailed()
		if f.Action != ActionNone || c == nil || c.Name != CheckNoUpgrade {
			t.Fatalf("%s: %s/%s first failed %+v: %s", ver, f.Type, f.Action, c, f.Reason)
		}
		for _, want := range []string{"deadlock", "concurrent-automatic-engine-upgrade-per-node-limit to 0", "back to \"" + imgOld + "\"", "docs/troubleshooting-two-active-engines.md"} {
			if !strings.Contains(f.Reason, want) {
				t.Errorf("%s: reason lacks %q: %s", ver, want, f.Reason)
			}
		}
		if strings.Contains(f.Reason, "after it finishes") {
			t.Errorf("%s: still says to wait for the upgrade: %s", ver, f.Reason)
		}
	}
}

// TestStuckNotWait (F4): the "in flight" and "wait" rows become "stuck"
// where Longhorn's processMigration returns before it touches the volume.
func TestStuckNotWait(t *testing.T) {
	type tc struct {
		name  string
		ver   string
		build func(vc versionCase) *scenario
		stuck bool
	}
	inFlight := func(m func(*scenario)) func(vc versionCase) *scenario {
		return func(vc versionCase) *scenario { s := migrating(vc, "vol"); m(s); return s }
	}
	extraInactive := func(m func(*scenario)) func(vc versionCase) *scenario {
		return func(vc versionCase) *scenario {
			s := migrating(vc, "vol")
			s.volume().Spec.MigrationNodeID = ""
			s.volume().Status.CurrentMigrationNodeID = ""
			m(s)
			return s
		}
	}
	upgrade := func(s *scenario) { setWantedImage(s, imgNew) }
	faulted := func(s *scenario) { s.volume().Status.Robustness = "faulted" }
	noNode := func(s *scenario) { s.volume().Spec.NodeID = "" }
	// Longhorn re-attaches, which sets it (explorer E17)
	noCurrent := func(s *scenario) { s.volume().Status.CurrentNodeID = "" }
	none := func(s *scenario) {}
	for _, c := range []tc{
		{"in flight, upgrade pending", "v1.4.3", inFlight(upgrade), true},
		{"in flight, upgrade pending", "v1.10.0", inFlight(upgrade), true},
		{"in flight, faulted", "v1.4.3", inFlight(faulted), true},
		{"in flight, faulted", "v1.10.0", inFlight(faulted), false},
		{"in flight, spec.nodeID empty", "v1.5.3", inFlight(noNode), true},
		{"in flight", "v1.5.3", inFlight(none), false},
		{"in flight, status.currentNodeID empty", "v1.4.3", inFlight(noCurrent), false},
		{"extra engine, status.currentNodeID empty", "v1.5.3", extraInactive(noCurrent), false},
		{"extra engine, upgrade pending", "v1.4.3", extraInactive(upgrade), true},
		{"extra engine, faulted", "v1.6.0", extraInactive(faulted), true},
		{"extra engine", "v1.4.3", extraInactive(none), false},
	} {
		s := c.build(versionCase{name: c.ver, version: c.ver})
		_, f := s.classify(t)
		var got bool
		switch f.Type {
		case TypeMigrationInFlight, TypeMigrationFinishing:
			got = f.Severity.NeedsAttention() && f.Action == ActionNone && strings.HasPrefix(f.Reason, "stuck: ")
		case TypeUpgradeMigrationDeadlock, TypeMigrationWithoutNode:
			// the family names these stuck states more exactly
			got = f.Severity.NeedsAttention() && f.Family != nil
		default:
			t.Errorf("%s on %s: type %s: %s", c.name, c.ver, f.Type, f.Reason)
			continue
		}
		if got != c.stuck {
			t.Errorf("%s on %s: stuck=%t, want %t: %s/%s: %s", c.name, c.ver, got, c.stuck, f.Severity, f.Action, f.Reason)
		}
	}
}

// TestConfirmInProgressTransient (F5): the moment of a normal confirm when
// the old engine is being deleted (still active), the new one not yet
// active and status.currentNodeID not yet moved is transient, not critical.
func TestConfirmInProgressTransient(t *testing.T) {
	for _, ver := range []string{"v1.4.3", "v1.5.3", "v1.10.0"} {
		s := migrating(versionCase{name: ver, version: ver}, "vol")
		v := s.volume()
		v.Spec.NodeID, v.Spec.MigrationNodeID = nodeB, ""
		ts := ago(3 * time.Second)
		s.engine(s.engA).DeletionTimestamp = &ts
		_, f := s.classify(t)
		if f.Type != TypePendingCleanup || f.Severity != SeverityInfo || f.Action != ActionWait || !strings.Contains(f.Reason, "confirm is finishing") {
			t.Errorf("%s: %s/%s/%s: %s", ver, f.Type, f.Severity, f.Action, f.Reason)
		}
		// the same beyond the threshold is reported
		ts = ago(time.Hour)
		s.engine(s.engA).DeletionTimestamp = &ts
		if _, f := s.classify(t); !f.Severity.NeedsAttention() {
			t.Errorf("%s: an hour later still %s: %s", ver, f.Severity, f.Reason)
		}
		// and without spec.nodeID moved it stays critical
		v.Spec.NodeID = nodeA
		ts = ago(3 * time.Second)
		s.engine(s.engA).DeletionTimestamp = &ts
		if _, f := s.classify(t); f.Severity != SeverityCritical {
			t.Errorf("%s: the serving engine deleted: %s: %s", ver, f.Severity, f.Reason)
		}
	}
}

var _ = longhorn.RobustnessHealthy
