package detect

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Regression tests for the bugs the tests above found in pkg/detect.

// After the documented delete on 1.5.0/1.5.1 the old engine waits for its
// finalizer with the replica flags still inverted and currentMigrationNodeID
// still set: Longhorn finishes the confirm itself, so this is the
// expected path of the fix, not the 1.3/1.4 replica-loss case.
func TestPendingCleanupInvertedAfterL15Delete(t *testing.T) {
	tests := []struct {
		vc   versionCase
		cmn  string
		age  time.Duration
		want Severity
	}{
		{vcL15a, nodeB, 2 * time.Minute, SeverityInfo},
		{vcL15a, nodeB, 30 * time.Minute, SeverityWarning}, // still reported when it lasts
		{vcL15f, nodeB, 2 * time.Minute, SeverityInfo},
		{vcL16, nodeB, 2 * time.Minute, SeverityInfo},
		{vcL15a, "", 2 * time.Minute, SeverityCritical},    // confirm already finished: nobody flips them
		{vcL15a, nodeA, 2 * time.Minute, SeverityCritical}, // not the stuck-confirm residue
		{vcL15a, nodeC, 2 * time.Minute, SeverityCritical},
		{vcL14a, nodeB, 2 * time.Minute, SeverityCritical}, // the field does not exist before 1.5
		{vcL13, nodeB, 2 * time.Minute, SeverityCritical},
		{vcUnknown, nodeB, 2 * time.Minute, SeverityCritical},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/cmn=%q/%s", tt.vc.name, tt.cmn, tt.age), func(t *testing.T) {
			s := stuck(tt.vc, "vol") // A-replicas active, B-replicas inactive
			s.volume().Status.CurrentMigrationNodeID = tt.cmn
			ts := ago(tt.age)
			s.engine(s.engA).DeletionTimestamp = &ts
			_, f := s.classify(t)
			want := ActionWait
			if tt.want == SeverityCritical && tt.vc.parsed().Known() && tt.cmn != nodeA && tt.cmn != nodeC && (tt.cmn == "" || tt.vc.parsed().HasCurrentMigrationNodeID()) {
				want = ActionSetReplicas // set the flags right while the engine exists
			}
			if f.Type != TypePendingCleanup || f.Action != want || f.Keep != s.engB {
				t.Fatalf("got %s/%s keep %q, want action %s: %s", f.Type, f.Action, f.Keep, want, f.Reason)
			}
			if f.Severity != tt.want {
				t.Errorf("severity %s, want %s: %s", f.Severity, tt.want, f.Reason)
			}
			if !strings.Contains(f.Reason, "inverted") {
				t.Errorf("reason does not mention the inverted flags: %s", f.Reason)
			}
		})
	}
}

// With no identifiable survivor no engine may be labelled stale in the
// evidence: one of them serves I/O.
func TestNoStaleRoleWithoutSurvivor(t *testing.T) {
	for _, mutate := range []func(*scenario){
		func(s *scenario) { s.volume().Status.CurrentNodeID = "" },
		func(s *scenario) { s.engine(s.engA).Spec.NodeID = nodeB },
		func(s *scenario) { s.engine(s.engB).Spec.NodeID = nodeC },
	} {
		s := stuck(vcL14a, "vol")
		mutate(s)
		_, f := s.classify(t)
		if f.Keep != "" || len(f.Stale) != 0 {
			t.Fatalf("keep %q stale %v", f.Keep, f.Stale)
		}
		for _, e := range f.Evidence.Engines {
			if e.Role != "" {
				t.Errorf("engine %s has role %q without a survivor", e.Name, e.Role)
			}
		}
	}
}

// status.currentEngineNodeID only exists from 1.12; on an older release
// the engine on currentNodeID is the survivor even for a v2 volume.
func TestServingNodeGatedOnVersion(t *testing.T) {
	for _, vc := range []versionCase{vcL15a, {"v2-1.5.1", "v1.5.1", true}} {
		s := stuck(vc, "vol")
		v := s.volume()
		v.Spec.BackendStoreDriver = longhorn.DataEngineV2
		v.Status.CurrentEngineNodeID = nodeA // inconsistent with the version
		_, f := s.classify(t)
		if f.Keep != s.engB || !reflect.DeepEqual(f.Stale, []string{s.engA}) {
			t.Errorf("%s: keep %q stale %v, want the engine on currentNodeID kept", vc.name, f.Keep, f.Stale)
		}
	}
	// On 1.12+ it does not decide either: in the state 1.12.0's switchover
	// leaves (longhorn#13951) it still names the old engine's node, while
	// the frontend sends I/O to the engine on spec.engineNodeID. Nothing is
	// done.
	s := stuck(vcV2, "vol")
	s.volume().Status.CurrentEngineNodeID = nodeA
	_, f := s.classify(t)
	if f.Keep != s.engB || f.Action != ActionNone || !strings.Contains(f.Reason, "status.currentEngineNodeID still names node-a") {
		t.Errorf("v2 1.12: keep %q action %s, want %s none: %s", f.Keep, f.Action, s.engB, f.Reason)
	}
}

// olderEngine must be a strict total order, or sorting depends on the input
// order (and sort.Slice's result is unspecified).
func TestOlderEngineTotalOrder(t *testing.T) {
	mk := func(name string, created time.Duration) *longhorn.Engine {
		e := &longhorn.Engine{}
		e.Name = name
		if created >= 0 {
			e.CreationTimestamp = ago(created)
		}
		return e
	}
	var es []*longhorn.Engine
	for i, n := range []string{"v-e-0", "v-e-1", "v-e-2", "v-e-10", "v-e-1a2b3c4d", "v-e-58b7738d", "v-e-20394857", "v-e-00000001"} {
		for _, c := range []time.Duration{-1, 0, time.Minute, time.Duration(i) * time.Second} {
			es = append(es, mk(n, c))
		}
	}
	for _, a := range es {
		if longhorn.OlderEngine(a, a) {
			t.Fatalf("longhorn.OlderEngine(%s, %s) is true", a.Name, a.Name)
		}
		for _, b := range es {
			ab, ba := longhorn.OlderEngine(a, b), longhorn.OlderEngine(b, a)
			if ab && ba {
				t.Fatalf("not antisymmetric: %s@%s %s@%s", a.Name, a.CreationTimestamp, b.Name, b.CreationTimestamp)
			}
			for _, c := range es {
				if ab && longhorn.OlderEngine(b, c) && !longhorn.OlderEngine(a, c) {
					t.Fatalf("not transitive: %s@%v < %s@%v < %s@%v", a.Name, a.CreationTimestamp, b.Name, b.CreationTimestamp, c.Name, c.CreationTimestamp)
				}
			}
		}
	}

	tests := []struct {
		a, b *longhorn.Engine
		want bool
	}{
		{mk("v-e-1", 0), mk("v-e-0", time.Minute), false},                        // creation time first
		{mk("v-e-20394857", time.Hour), mk("v-e-1", time.Minute), true},          // a random all-digit legacy name
		{mk("v-e-1a2b3c4d", time.Minute), mk("v-e-1", time.Minute), true},        // same second: legacy random name first
		{mk("v-e-2", time.Minute), mk("v-e-10", time.Minute), true},              // numerically, not by string
		{mk("v-e-2", -1), mk("v-e-10", -1), true},                                // no timestamps
		{mk("v-e-5e6f7a8b", time.Minute), mk("v-e-a1b2c3d4", time.Minute), true}, // then by name
	}
	for _, tt := range tests {
		if got := longhorn.OlderEngine(tt.a, tt.b); got != tt.want {
			t.Errorf("longhorn.OlderEngine(%s@%v, %s@%v) = %t, want %t", tt.a.Name, tt.a.CreationTimestamp, tt.b.Name, tt.b.CreationTimestamp, got, tt.want)
		}
	}
}

// The mixed-name case the property test found: a legacy random engine and
// deterministic ones created after an upgrade to a fixed release.
func TestEvidenceOrderMixedNames(t *testing.T) {
	s := stuck(vcL15f, "vol")
	legacy := engine(vcL15f, "vol", "vol-e-58b7738d", nodeC, 3*time.Minute)
	legacy.Spec.Active = false
	s.engine(s.engA).CreationTimestamp = ago(0)               // vol-e-0
	s.engine(s.engB).CreationTimestamp = ago(3 * time.Minute) // vol-e-1
	s.st.Engines = append(s.st.Engines, legacy)
	var first []string
	for k := 0; k < 6; k++ {
		es := s.st.Engines
		es[0], es[k%3] = es[k%3], es[0]
		_, f := s.classify(t)
		var got []string
		for _, e := range f.Evidence.Engines {
			got = append(got, e.Name)
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Fatalf("evidence order depends on input order: %v vs %v", got, first)
		}
	}
	if want := []string{"vol-e-58b7738d", "vol-e-1", "vol-e-0"}; !reflect.DeepEqual(first, want) {
		t.Errorf("evidence order %v, want %v", first, want)
	}
}

// Orphan processes are reported in instance-manager name order.
func TestOrphanProcessOrder(t *testing.T) {
	s := healthy(vcL14a, "vol")
	var ims []longhorn.InstanceManager
	for _, n := range []string{"instance-manager-e-c", "instance-manager-e-a", "instance-manager-e-b"} {
		im := longhorn.InstanceManager{}
		im.Name = n
		im.Spec = longhorn.InstanceManagerSpec{NodeID: "node-" + n[len(n)-1:], Type: "engine"}
		im.Status.Instances = rawMap{"vol-e-deadbeef": json.RawMessage(`{}`)}
		ims = append(ims, im)
	}
	s.st.InstanceManagers = ims
	res := Classify(s.st, Options{})
	var got []string
	for _, f := range res.Findings {
		got = append(got, f.Evidence.Engines[0].InstanceManager)
	}
	if want := []string{"instance-manager-e-a", "instance-manager-e-b", "instance-manager-e-c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("orphan process order %v, want %v", got, want)
	}
	if s.st.InstanceManagers[0].Name != "instance-manager-e-c" {
		t.Error("Classify reordered the input")
	}
}

// A JSON report must decode back into Findings (scan -o json consumers).
func TestFindingJSONRoundTrip(t *testing.T) {
	s := pendingScenario(vcL14a, 12*time.Minute+30*time.Second)
	res := Classify(s.st, Options{})
	b, err := json.Marshal(res.Findings)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"age":"12m30s"`) {
		t.Errorf("age not written as a duration string: %s", b)
	}
	var back []Finding
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(back) != 1 || back[0].Age == nil || back[0].Age.Duration != 12*time.Minute+30*time.Second {
		t.Fatalf("decoded %+v", back)
	}
	if !jsonEqual(back, res.Findings) {
		t.Errorf("round trip differs:\n%s\n%s", mustJSON(back), mustJSON(res.Findings))
	}
	var d Duration
	for in, want := range map[string]time.Duration{`"1h2m3s"`: time.Hour + 2*time.Minute + 3*time.Second, `"0s"`: 0, `1500000000`: 1500 * time.Millisecond, `null`: 0} {
		d = Duration{}
		if err := json.Unmarshal([]byte(in), &d); err != nil || d.Duration != want {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", in, d.Duration, err, want)
		}
	}
	for _, in := range []string{`"soon"`, `true`, `{}`} {
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("Unmarshal(%s) accepted", in)
		}
	}
}

// An active engine being deleted on the volume's current node is not the
// leftover of a confirm: nothing would serve I/O once it goes.
func TestPendingCleanupOfTheServingEngineWarns(t *testing.T) {
	// A healthy volume on A gets a second, active engine on B, and then the
	// engine on A (the serving one) is deleted.
	s := migrating(vcL14f, "vol")
	s.volume().Spec.MigrationNodeID = ""
	s.engine(s.engB).Spec.Active = true
	del := ago(time.Minute)
	s.engine(s.engA).DeletionTimestamp = &del
	_, f := s.classify(t)
	if f.Type != TypePendingCleanup || f.Severity != SeverityCritical || !strings.Contains(f.Reason, "on the volume's current node node-a is being deleted") {
		t.Errorf("got %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
}
