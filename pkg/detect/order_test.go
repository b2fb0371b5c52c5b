package detect

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// prefixHazard applies changes one by one and says what a stop after any
// prefix, followed by the stale engine's deletion, would expose ("" when
// nothing): a directory with two active Replica CRs that it did not have
// before (cleanupExtraHealthyReplicas may delete one, wiping the directory;
// before 1.5.3 never allowed, from 1.5.3 at most one directory at a time),
// and from 1.5.3 a directory the survivor uses left with no active user
// (deleting its last inactive user wipes it).
func prefixHazard(ver longhorn.Version, keep string, replicas []*longhorn.Replica, changes []ReplicaChange) string {
	cur := map[string]longhorn.Replica{}
	for _, r := range replicas {
		cur[r.Name] = *r
	}
	type dirState struct{ active, users int }
	dirs := func() map[string]dirState {
		m := map[string]dirState{}
		for _, r := range cur {
			d := m[dirKey(&r)]
			d.users++
			if r.Spec.Active {
				d.active++
			}
			m[dirKey(&r)] = d
		}
		return m
	}
	survivorDir := map[string]bool{}
	for _, r := range replicas {
		if r.Spec.EngineName == keep {
			survivorDir[dirKey(r)] = true
		}
	}
	start := dirs()
	for i := 0; i <= len(changes); i++ {
		if i > 0 {
			c := changes[i-1]
			r := cur[c.Replica]
			r.Spec.EngineName, r.Spec.Active = c.ToEngine, c.ToActive
			cur[c.Replica] = r
		}
		doubled := 0
		for k, d := range dirs() {
			if d.active >= 2 && start[k].active < 2 {
				doubled++
				if !inactiveDeleteWipes(ver) {
					return fmt.Sprintf("after %d write(s) directory %q has %d active replicas", i, k, d.active)
				}
			}
			if inactiveDeleteWipes(ver) && survivorDir[k] && d.active == 0 && start[k].active > 0 {
				return fmt.Sprintf("after %d write(s) directory %q, which the survivor uses, has no active replica", i, k)
			}
		}
		if doubled > 1 {
			return fmt.Sprintf("after %d write(s) %d directories have two active replicas", i, doubled)
		}
	}
	return ""
}

func replicaPtrs(rs []longhorn.Replica) []*longhorn.Replica {
	out := make([]*longhorn.Replica, len(rs))
	for i := range rs {
		out[i] = &rs[i]
	}
	return out
}

// TestFlipOrderSafeAtEveryPrefix (F1): the #6642 state with the clones
// sharing their originals' directories, on a release of each rule. The old
// order (every activation first) failed on 1.4.3: a stop after the first
// write left a directory with two active replicas.
func TestFlipOrderSafeAtEveryPrefix(t *testing.T) {
	for _, ver := range []string{"v1.3.3", "v1.4.3", "v1.5.1", "v1.5.2", "v1.5.3", "v1.6.0", "v1.10.0"} {
		t.Run(ver, func(t *testing.T) {
			s := stuck(versionCase{name: ver, version: ver}, "vol")
			// a third directory pair
			s.st.Replicas = append(s.st.Replicas,
				replica("vol", "vol-r-aaaa0003", nodeB, s.engA, true),
				replica("vol", "vol-r-bbbb0003", nodeB, s.engB, false))
			rs := replicaPtrs(s.st.Replicas)
			v := longhorn.MustParseVersion(ver)
			changes := flipChanges(v, s.engB, rs)
			if len(changes) != 6 {
				t.Fatalf("%d changes, want 6: %+v", len(changes), changes)
			}
			if h := prefixHazard(v, s.engB, rs, changes); h != "" {
				t.Errorf("%s: %s\n%+v", ver, h, changes)
			}
			var order []string
			for _, c := range changes {
				order = append(order, fmt.Sprintf("%s=%t", c.Replica, c.ToActive))
			}
			t.Logf("%s: %s", ver, strings.Join(order, " "))
		})
	}
}

// TestFlipOneActivePerDirectory: the flip never gives a directory a second
// active replica of the survivor (explorer, seed 31 state 75 on 1.4.3).
func TestFlipOneActivePerDirectory(t *testing.T) {
	v := longhorn.MustParseVersion("v1.4.3")
	s := stuck(versionCase{name: "v1.4.3", version: "v1.4.3"}, "vol")
	// engB's replicas are vol-r-bbbb0001 (node-a) and -0002 (node-c); add a
	// second one on node-a's directory, active, and one more, inactive
	dup := replica("vol", "vol-r-bbbb0009", nodeA, s.engB, true)
	dup2 := replica("vol", "vol-r-bbbb0010", nodeA, s.engB, false)
	s.st.Replicas = append(s.st.Replicas, dup, dup2)
	for _, c := range flipChanges(v, s.engB, replicaPtrs(s.st.Replicas)) {
		if c.ToActive && (c.Replica == "vol-r-bbbb0001" || c.Replica == dup2.Name) {
			t.Errorf("activates %s beside the active %s on one directory", c.Replica, dup.Name)
		}
	}
	// two inactive ones on one directory: one is activated
	s = stuck(versionCase{name: "v1.4.3", version: "v1.4.3"}, "vol")
	s.st.Replicas = append(s.st.Replicas, dup2)
	n := 0
	for _, c := range flipChanges(v, s.engB, replicaPtrs(s.st.Replicas)) {
		if c.ToActive && (c.Replica == "vol-r-bbbb0001" || c.Replica == dup2.Name) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d activations on node-a's directory, want 1", n)
	}
}

// TestNoExtraCleanupRefuses (F1, 1.5.3+): where a directory briefly has two
// active replicas, any Longhorn path that deletes extra healthy replicas
// refuses the repair; before 1.5.3 the order needs no such check.
func TestNoExtraCleanupRefuses(t *testing.T) {
	cases := map[string]func(s *scenario){
		"data locality":              func(s *scenario) { s.volume().Spec.DataLocality = "best-effort" },
		"volume auto-balance":        func(s *scenario) { s.volume().Spec.ReplicaAutoBalance = "least-effort" },
		"global auto-balance":        func(s *scenario) { s.st.ReplicaAutoBalance = "best-effort" },
		"setting unreadable":         func(s *scenario) { s.st.ReplicaAutoBalance = longhorn.SettingUnreadable },
		"eviction":                   func(s *scenario) { s.replicasOf(s.engA)[0].Status.EvictionRequested = true },
		"volume disables, global on": func(s *scenario) {},
	}
	for _, ver := range []string{"v1.4.3", "v1.5.3", "v1.10.0"} {
		for name, m := range cases {
			s := stuck(versionCase{name: ver, version: ver}, "vol")
			m(s)
			if name == "volume disables, global on" {
				s.st.ReplicaAutoBalance = "best-effort"
				s.volume().Spec.ReplicaAutoBalance = "disabled"
			}
			_, f := s.classify(t)
			c, _ := findCheck(f, CheckNoExtraCleanup)
			wantRefused := ver != "v1.4.3" && name != "volume disables, global on"
			if c.OK == wantRefused || (f.Action == ActionNone) != wantRefused {
				t.Errorf("%s/%s: check %+v, action %s: %s", ver, name, c, f.Action, f.Reason)
			}
		}
	}
}

// TestInactiveTwinRefuses: a healthy inactive replica of the survivor on
// the directory its active replica uses is set active again by Longhorn's
// confirm; with a clean-up of extra healthy replicas possible, the repair
// is refused on every release (explorer, seed 31 state 75 on 1.4.3).
func TestInactiveTwinRefuses(t *testing.T) {
	for _, ver := range []string{"v1.4.3", "v1.5.3", "v1.10.0"} {
		for _, tc := range []struct {
			name    string
			healthy bool
			balance string
			refused bool
		}{
			{"healthy twin, auto-balance", true, "best-effort", true},
			{"healthy twin, auto-balance disabled", true, "disabled", false},
			{"twin never healthy, auto-balance", false, "best-effort", false},
		} {
			s := stuck(versionCase{name: ver, version: ver}, "vol")
			twin := replica("vol", "vol-r-bbbb0009", nodeA, s.engB, false)
			if !tc.healthy {
				twin.Spec.HealthyAt = ""
			}
			s.st.Replicas = append(s.st.Replicas, twin)
			for _, r := range s.replicasOf(s.engB) {
				r.Spec.Active = r.Name != twin.Name
			}
			for _, r := range s.replicasOf(s.engA) {
				r.Spec.Active = false
			}
			s.st.ReplicaAutoBalance = tc.balance
			_, f := s.classify(t)
			c, _ := findCheck(f, CheckNoExtraCleanup)
			if c.OK == tc.refused || (f.Action == ActionNone) != tc.refused {
				t.Errorf("%s/%s: check %+v, action %s: %s", ver, tc.name, c, f.Action, f.Reason)
			}
			if tc.refused && tc.healthy && !strings.Contains(c.Failure, twin.Name+" of the survivor is inactive") {
				t.Errorf("%s/%s: failure does not name the twin: %s", ver, tc.name, c.Failure)
			}
		}
	}
}

// TestDanglingSharedDirDeactivated (F2): after a stop that activated a
// clone and the stale engine's deletion, a dangling replica shares its
// directory with an active replica of the survivor. Repointing it (as
// before) gave the survivor two active replicas on one directory; it is
// deactivated instead, and the others are still repointed.
func TestDanglingSharedDirDeactivated(t *testing.T) {
	for _, ver := range []string{"v1.4.3", "v1.5.3", "v1.10.0"} {
		s := stuck(versionCase{name: ver, version: ver}, "vol")
		// clone bbbb0001 (node-a) activated, then the stale engine deleted:
		// Longhorn removed the inactive clone bbbb0002.
		for _, r := range s.replicasOf(s.engB) {
			r.Spec.Active = r.Name == "vol-r-bbbb0001"
		}
		s.removeEngine(s.engA)
		out := s.st.Replicas[:0]
		for _, r := range s.st.Replicas {
			if r.Name != "vol-r-bbbb0002" {
				out = append(out, r)
			}
		}
		s.st.Replicas = out
		_, f := s.classify(t)
		if f.Type != TypeDanglingReplicas || f.Action != ActionSetReplicas {
			t.Fatalf("%s: %s/%s: %s", ver, f.Type, f.Action, f.Reason)
		}
		want := []ReplicaChange{
			{Replica: "vol-r-aaaa0001", FromEngine: s.engA, ToEngine: s.engA, FromActive: true},
			{Replica: "vol-r-aaaa0002", FromEngine: s.engA, ToEngine: s.engB, FromActive: true, ToActive: true},
		}
		if mustJSON(f.ReplicaChanges) != mustJSON(want) {
			t.Errorf("%s: changes %s, want %s", ver, mustJSON(f.ReplicaChanges), mustJSON(want))
		}
	}
}

// TestV2OnAffectedReleasesRefused (F6): a v2 volume on 1.5.0/1.5.1 (spec.
// backendStoreDriver v2) is stuck like a v1 one, but deleting any v2
// replica drops its logical volume whatever its flag: no repair. These
// releases cannot be run here (simulator only).
func TestV2OnAffectedReleasesRefused(t *testing.T) {
	for _, ver := range []string{"v1.5.0", "v1.5.1"} {
		s := stuck(versionCase{name: vcL15a.name, version: ver}, "vol")
		s.volume().Spec.BackendStoreDriver = longhorn.DataEngineV2
		_, f := s.classify(t)
		if f.Type != TypeMultipleActiveEngines || f.Action != ActionNone || !strings.Contains(f.Reason, "v2 volume") {
			t.Errorf("%s: %s/%s: %s", ver, f.Type, f.Action, f.Reason)
		}
		// the same volume as v1 is repaired
		s.volume().Spec.BackendStoreDriver = longhorn.DataEngineV1
		if _, f := s.classify(t); f.Action != ActionDelete {
			t.Errorf("%s v1: %s/%s: %s", ver, f.Type, f.Action, f.Reason)
		}
	}
}

// TestTwinHandedToStaleEngine: an inactive twin of the survivor (a second
// replica of it on a directory it serves, or will serve once the flags are
// set) is pointed at the stale engine before any flag is written, so that
// Longhorn's finish, which sets active every replica of the engine it
// keeps, does not give that directory two active replicas (explorer, seed
// 45 state 149 on 1.4.3 and seed 37 state 18 on 1.5.3: fix exited 0 and
// Longhorn left SharedReplicaDirectory). Without a twin nothing is handed.
func TestTwinHandedToStaleEngine(t *testing.T) {
	for _, ver := range []string{"v1.4.3", "v1.5.3", "v1.10.0"} {
		vc := versionCase{name: ver, version: ver}
		s := stuck(vc, "vol")
		if _, f := s.classify(t); slices.ContainsFunc(f.ReplicaChanges, func(c ReplicaChange) bool { return c.ToEngine != c.FromEngine }) {
			t.Fatalf("%s: no twin, yet a replica is handed over: %+v", ver, f.ReplicaChanges)
		}
		// beside engB's active replica on node-a's directory, and a second
		// inactive one on node-c's, where the flip activates the first
		s = stuck(vc, "vol")
		s.setReplicasActive(s.engB, false)
		s.replicasOf(s.engB)[0].Spec.Active = true
		s.st.Replicas = append(s.st.Replicas,
			replica("vol", "vol-r-bbbb0009", nodeA, s.engB, false),
			replica("vol", "vol-r-bbbb0010", nodeC, s.engB, false))
		_, f := s.classify(t)
		if f.Action == ActionNone {
			t.Fatalf("%s: refused: %s", ver, f.Reason)
		}
		handed := map[string]bool{}
		for i, c := range f.ReplicaChanges {
			if c.ToEngine == c.FromEngine {
				continue
			}
			if i >= 2 || c.FromEngine != s.engB || c.ToEngine != s.engA || c.FromActive || c.ToActive {
				t.Errorf("%s: change %d %+v: want a twin of %s handed to %s, inactive, first", ver, i, c, s.engB, s.engA)
			}
			handed[c.Replica] = true
		}
		if !handed["vol-r-bbbb0009"] || !handed["vol-r-bbbb0010"] || len(handed) != 2 {
			t.Errorf("%s: handed over %v, want vol-r-bbbb0009 and vol-r-bbbb0010", ver, handed)
		}
		if !strings.Contains(f.Reason, "inactive twin replicas") {
			t.Errorf("%s: the plan does not say so: %s", ver, f.Reason)
		}
	}
}
