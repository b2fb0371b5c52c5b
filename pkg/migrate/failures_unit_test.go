package migrate

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TestConfirmedNeedsAnAttachedVolume: on 1.5+ a volume Longhorn detached
// mid-migration (spec.nodeID empty) has no ticket on node "", which once
// read as "confirmed"; a confirm means the volume is attached to the target.
func TestConfirmedNeedsAnAttachedVolume(t *testing.T) {
	for _, ver := range []string{"v1.5.3", "v1.10.0"} {
		d := driverFor(longhorn.MustParseVersion(ver))
		detached := snapOf(t, testenv.CrashDetached(ver, "vol"))
		if d.confirmed(detached, nodeB) {
			t.Errorf("%s: a detached volume with tickets on both nodes reads as confirmed to %s", ver, nodeB)
		}
		onlyB := snapOf(t, testenv.CrashDetached(ver, "vol"))
		onlyB.va = testenv.NewVA("vol", nodeB)
		if d.confirmed(onlyB, nodeB) {
			t.Errorf("%s: a detached volume with B's ticket only reads as confirmed (Longhorn has not attached it)", ver)
		}
		if d.confirmed(snapOf(t, testenv.MidMigration(ver, "vol")), nodeB) {
			t.Errorf("%s: a migration in flight reads as confirmed", ver)
		}
		if !d.confirmed(snapOf(t, confirmed(ver, "vol")), nodeB) {
			t.Errorf("%s: a finished confirm does not read as confirmed", ver)
		}
	}
}

// TestReadinessAroundFailures: the readiness rules for the states Longhorn's
// own failure suites drive: a migration engine in error is being replaced
// (not a failure), a replica about to rebuild on the serving engine keeps
// the migration from being ready, clones that inherited lastFailedAt are
// named on the releases of longhorn#12311, a clone on a node that is down
// is not waited for, and a data directory cloned twice is a failure only
// where Longhorn does not delete the extra clone itself.
func TestReadinessAroundFailures(t *testing.T) {
	for _, ver := range []string{"v1.4.3", "v1.5.3", "v1.9.1", "v1.10.0", "v1.10.2", "v1.11.1"} {
		t.Run(ver, func(t *testing.T) {
			d := driverFor(longhorn.MustParseVersion(ver))
			ready := func(mut func(s *snapshot)) readiness {
				s := snapOf(t, testenv.MidMigration(ver, "vol"))
				mut(s)
				return checkReady(s, d, nodeB)
			}
			r := ready(func(s *snapshot) { s.engines[1].Status.CurrentState = longhorn.StateError })
			if r.ready || r.failed != "" || r.recreating == "" {
				t.Errorf("migration engine in error: ready=%t failed=%q recreating=%q; want waiting for Longhorn to replace it", r.ready, r.failed, r.recreating)
			}
			r = ready(func(s *snapshot) { s.engines[0].Spec.ReplicaAddressMap["vol-r-new"] = "tcp://10.0.0.9:10000" })
			if r.ready || !strings.Contains(r.String(), "rebuilding: vol-r-new") {
				t.Errorf("a replica in the serving engine's address map with no mode yet: %s; want not ready, rebuilding", r)
			}
			r = ready(func(s *snapshot) {
				for _, rp := range s.replicasOf(s.engines[1].Name) {
					rp.Spec.LastFailedAt = "2026-01-01T00:00:00Z"
				}
			})
			named := strings.Contains(r.String(), "longhorn#12311")
			if want := ver == "v1.9.1" || ver == "v1.10.0"; named != want {
				t.Errorf("clones with an inherited lastFailedAt named=%t, want %t: %s", named, want, r)
			}
			// a clone on a node that went down (longhorn-tests' "Volume
			// Degraded Between Migration And Confirmation"): Longhorn's
			// volume controller leaves it out, and so does readiness
			stranded := func(s *snapshot) string {
				c := s.replicas[len(s.replicas)-1]
				c.Name, c.Spec.NodeID, c.Spec.DataDirectoryName = "vol-r-on-c", "node-c", "vol-dir-c"
				c.Status.CurrentState = longhorn.StateUnknown
				s.replicas = append(s.replicas, c)
				return c.Name
			}
			if r = ready(func(s *snapshot) { stranded(s) }); r.ready {
				t.Errorf("a clone not running on a node that is up: ready; want waiting for it")
			}
			if r = ready(func(s *snapshot) { s.unavailable = map[string]bool{stranded(s): true} }); !r.ready {
				t.Errorf("a clone on a node that is down: %s; want ready, as Longhorn leaves it out", r)
			}
			r = ready(func(s *snapshot) {
				dup := s.replicas[len(s.replicas)-1]
				dup.Name += "-twice"
				s.replicas = append(s.replicas, dup)
			})
			never := r.failed != ""
			if want := ver != "v1.10.2" && ver != "v1.11.1"; never != want || r.ready {
				t.Errorf("directory cloned twice: failed=%q, want failed=%t (Longhorn %s deletes the extra clone itself: %t)", r.failed, want, ver, !want)
			}
		})
	}
}

// TestCrashDetachedFinding: scan names the 1.7+ crash-detached state with
// both nodes, as a warning; before 1.7 Longhorn attaches such a volume by
// itself, so there is no such finding.
func TestCrashDetachedFinding(t *testing.T) {
	for _, tc := range []struct {
		ver  string
		want bool
	}{{"v1.5.3", false}, {"v1.6.2", false}, {"v1.7.0", true}, {"v1.10.0", true}} {
		s := snapOf(t, testenv.CrashDetached(tc.ver, "vol"))
		f, ok := s.classify("longhorn-system")
		got := ok && f.Type == detect.TypeMigrationCrashDetached
		if got != tc.want {
			t.Errorf("%s: finding %v %q, want MigrationCrashDetached=%t", tc.ver, ok, f.Type, tc.want)
			continue
		}
		if got && (f.Severity != detect.SeverityWarning || !strings.Contains(f.Reason, "node-a and node-b")) {
			t.Errorf("%s: severity %s reason %q", tc.ver, f.Severity, f.Reason)
		}
		if nodes := s.crashDetached(); (nodes != nil) != tc.want {
			t.Errorf("%s: crashDetached() = %v", tc.ver, nodes)
		}
	}
	one := snapOf(t, testenv.CrashDetached("v1.10.0", "vol"))
	one.va = testenv.NewVA("vol", nodeB)
	if nodes := one.crashDetached(); nodes != nil {
		t.Errorf("one ticket left: crashDetached() = %v, Longhorn attaches it", nodes)
	}
}
