package detect

import (
	"reflect"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// The state Longhorn 1.12.0's engine switchover leaves when its update of
// the old engine conflicts (longhorn#13951): the engine on the new engine
// node is active and the frontend sends I/O to it, the old one is still
// active, status.currentEngineNodeID still names the old node.
func switchoverStuck() *scenario {
	s := stuck(vcV2, "vol")
	v := s.volume()
	v.Spec.NodeID, v.Status.CurrentNodeID = nodeB, nodeB // the frontend's node
	v.Spec.EngineNodeID, v.Status.CurrentEngineNodeID = nodeC, nodeA
	v.Status.SwitchoverState = "switching-over"
	s.engine(s.engA).Spec.NodeID = nodeA
	s.engine(s.engB).Spec.NodeID = nodeC
	return s
}

func TestV2SwitchoverTwoActiveEngines(t *testing.T) {
	s := switchoverStuck()
	_, f := s.classify(t)
	if f.Type != TypeMultipleActiveEngines || f.Severity != SeverityCritical || f.Action != ActionNone {
		t.Fatalf("got %s/%s/%s: %s", f.Type, f.Severity, f.Action, f.Reason)
	}
	if f.Keep != s.engB || !reflect.DeepEqual(f.Stale, []string{s.engA}) {
		t.Fatalf("keep %q stale %v, want %s (the frontend's engine, on spec.engineNodeID) and [%s]", f.Keep, f.Stale, s.engB, s.engA)
	}
	for _, want := range []string{"13951", "fixed in 1.12.2", "status.currentEngineNodeID still names node-a", "vol-ef-0 sends I/O to it"} {
		if !strings.Contains(f.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, f.Reason)
		}
	}
	patch := `kubectl -n longhorn-system patch engines.longhorn.io ` + s.engA + ` --type=merge -p '{"spec":{"active":false}}'`
	if !contains(f.Steps, patch) {
		t.Errorf("steps lack %q: %q", patch, f.Steps)
	}
	if f.Evidence.EngineNodeID != nodeC || f.Evidence.SwitchoverState != "switching-over" || f.Evidence.EngineFrontends[0].EngineName != s.engB {
		t.Errorf("evidence: %s", mustJSON(f.Evidence))
	}
}

// Whenever the frontend does not say which engine serves I/O, nothing is
// kept and the steps change nothing.
func TestV2SwitchoverNoSurvivor(t *testing.T) {
	for name, mutate := range map[string]func(s *scenario){
		"no frontend": func(s *scenario) { s.st.EngineFrontends = nil },
		"frontend connected to the old engine": func(s *scenario) {
			ef := &s.st.EngineFrontends[0]
			ef.Status.TargetIP, ef.Status.TargetPort = s.engine(s.engA).Status.IP, s.engine(s.engA).Status.Port
		},
		"frontend switching (spec and status disagree)": func(s *scenario) {
			s.st.EngineFrontends[0].Spec.EngineName = s.engA
		},
		"frontend's engine not on spec.engineNodeID": func(s *scenario) {
			s.volume().Spec.EngineNodeID = nodeA
		},
		"two active frontends": func(s *scenario) {
			ef := *testenv.NewEngineFrontend("vol-ef-1", "vol", nodeA, true, s.engine(s.engA))
			s.st.EngineFrontends = append(s.st.EngineFrontends, ef)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := switchoverStuck()
			mutate(s)
			_, f := s.classify(t)
			if f.Type != TypeMultipleActiveEngines || f.Keep != "" || len(f.Stale) != 0 || f.Action != ActionNone {
				t.Fatalf("got %s keep %q stale %v action %s: %s", f.Type, f.Keep, f.Stale, f.Action, f.Reason)
			}
			if !strings.Contains(f.Reason, "which engine serves I/O is not clear") {
				t.Errorf("reason: %s", f.Reason)
			}
			for _, st := range f.Steps {
				if strings.Contains(st, " patch ") {
					t.Errorf("a step writes although no engine is known to serve: %s", st)
				}
			}
		})
	}
}

// Two active engine frontends: the one on the volume's node, connected to
// the active engine, is kept; the other gets spec.active=false by hand.
func TestV2TwoActiveFrontends(t *testing.T) {
	s := healthy(vcV2, "vol")
	s.withFrontend(nodeA, s.engA)
	extra := *testenv.NewEngineFrontend("vol-ef-1", "vol", nodeB, true, s.engine(s.engA))
	extra.Status.TargetIP = ""
	s.st.EngineFrontends = append(s.st.EngineFrontends, extra)
	_, f := s.classify(t)
	if f.Type != TypeMultipleActiveEngineFrontends || f.Severity != SeverityCritical || f.Action != ActionNone {
		t.Fatalf("got %s/%s/%s: %s", f.Type, f.Severity, f.Action, f.Reason)
	}
	if f.Keep != "vol-ef-0" || !reflect.DeepEqual(f.Stale, []string{"vol-ef-1"}) {
		t.Fatalf("keep %q stale %v", f.Keep, f.Stale)
	}
	if !strings.Contains(f.Reason, "BUG: found the second active engine frontend") {
		t.Errorf("reason: %s", f.Reason)
	}
	patch := `kubectl -n longhorn-system patch enginefrontends.longhorn.io vol-ef-1 --type=merge -p '{"spec":{"active":false}}'`
	if !contains(f.Steps, patch) {
		t.Errorf("steps lack %q: %q", patch, f.Steps)
	}
	if f.Evidence.EngineFrontends[0].Role != "keep" || f.Evidence.EngineFrontends[1].Role != "stale" {
		t.Errorf("roles: %s", mustJSON(f.Evidence.EngineFrontends))
	}
	// Not settled on one node: nothing is kept.
	s.volume().Status.CurrentNodeID = nodeB
	_, f = s.classify(t)
	if f.Type != TypeMultipleActiveEngineFrontends || f.Keep != "" {
		t.Errorf("unsettled: %s keep %q", f.Type, f.Keep)
	}
}

// Before 1.12 a v2 volume has no frontends and no engine node: the rows of
// v2.go do not apply.
func TestV2RowsOnlyFrom112(t *testing.T) {
	s := stuck(versionCase{"v2-1.11.1", "v1.11.1", true}, "vol")
	_, f := s.classify(t)
	if f.Type != TypeMultipleActiveEngines || len(f.Preconditions) == 0 || len(f.Steps) != 0 {
		t.Errorf("1.11.1: %s, %d preconditions, steps %q", f.Type, len(f.Preconditions), f.Steps)
	}
}
