package fix

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// The action per release class and --strategy (issue 4, "Strategy
// semantics"): delete only on 1.5.0/1.5.1, nothing on fixed releases.
func TestChooseActionByVersionAndStrategy(t *testing.T) {
	const (
		none = detect.ActionNone
		deac = detect.ActionDeactivate
		del  = detect.ActionDelete
	)
	tests := []struct {
		version string
		want    map[Strategy]detect.Action
	}{
		{testenv.L13, map[Strategy]detect.Action{StrategyAuto: deac, StrategyDeactivate: deac, StrategyDelete: none}},
		{testenv.L14a, map[Strategy]detect.Action{StrategyAuto: deac, StrategyDeactivate: deac, StrategyDelete: none}},
		{testenv.L15a, map[Strategy]detect.Action{StrategyAuto: del, StrategyDeactivate: deac, StrategyDelete: del}},
		// stuck before an upgrade: the same repair, never a delete
		{testenv.L14f, map[Strategy]detect.Action{StrategyAuto: deac, StrategyDeactivate: deac, StrategyDelete: none}},
		{testenv.L15f, map[Strategy]detect.Action{StrategyAuto: deac, StrategyDeactivate: deac, StrategyDelete: none}},
		{testenv.L16, map[Strategy]detect.Action{StrategyAuto: deac, StrategyDeactivate: deac, StrategyDelete: none}},
		{"v1.12.0", map[Strategy]detect.Action{StrategyAuto: deac, StrategyDeactivate: deac, StrategyDelete: none}},
		{"v1.13.0", map[Strategy]detect.Action{StrategyAuto: none, StrategyDeactivate: none, StrategyDelete: none}},
	}
	for _, tt := range tests {
		st := stateOf(testenv.TwoActiveEngines(tt.version, "vol"))
		for s, want := range tt.want {
			p := planOne(t, st, "vol", s)
			if p.Action != want {
				t.Errorf("%s --strategy=%s: action %s, want %s (%s)", tt.version, s, p.Action, want, p.Why)
			}
			if p.Acts() && (p.Keep.Name != testenv.EngineName(tt.version, "vol", 1) || len(p.Stale) != 1 || p.Stale[0].Name != testenv.EngineName(tt.version, "vol", 0)) {
				t.Errorf("%s: keep %s stale %s, want keep the engine on node-b", tt.version, p.Keep.Name, names(p.Stale))
			}
		}
	}
	// The refusal of delete on 1.3/1.4 says why.
	p := planOne(t, stateOf(testenv.TwoActiveEngines(testenv.L14a, "vol")), "vol", StrategyDelete)
	if !strings.Contains(p.Why, "--strategy=delete refused") || !strings.Contains(p.Why, "replicas") {
		t.Errorf("delete on 1.4.3: why = %q", p.Why)
	}
}

// A failed precondition is never overridden by a strategy.
func TestStrategyNeverOverridesPreconditions(t *testing.T) {
	for _, v := range []string{testenv.L13, testenv.L14a, testenv.L15a} {
		st := stateOf(testenv.Issue4827(v, "vol")) // spec.nodeID empty
		for _, s := range []Strategy{StrategyAuto, StrategyDeactivate, StrategyDelete} {
			p := planOne(t, st, "vol", s)
			if p.Acts() {
				t.Errorf("%s --strategy=%s acts on longhorn#4827's state: %s", v, s, p.Why)
			}
		}
	}
}

func TestParseStrategy(t *testing.T) {
	for _, s := range Strategies {
		if _, err := ParseStrategy(s); err != nil {
			t.Errorf("ParseStrategy(%q): %v", s, err)
		}
	}
	if _, err := ParseStrategy("force"); err == nil {
		t.Error("ParseStrategy(force) accepted")
	}
}
