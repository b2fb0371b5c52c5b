package fix

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Every change between the plan and the re-read that the write depends on
// makes the volume skip; the survivor's own status churn does not.
func TestChangedSince(t *testing.T) {
	stale := testenv.EngineName(testenv.L14a, "vol", 0)
	keep := testenv.EngineName(testenv.L14a, "vol", 1)
	tests := []struct {
		name   string
		mutate func(st *longhorn.State)
		want   string // substring of the reason; "" = still the plan
	}{
		{"unchanged", func(*longhorn.State) {}, ""},
		{"survivor status moved", func(st *longhorn.State) {
			e := longhorn.Named(st.Engines, keep)
			e.ResourceVersion, e.Status.Endpoint = "999", "/dev/longhorn/vol2"
		}, ""},
		{"volume resourceVersion", func(st *longhorn.State) { st.Volume("vol").ResourceVersion = "999" }, "the volume changed"},
		{"volume re-created", func(st *longhorn.State) { st.Volume("vol").UID = "other" }, "re-created"},
		{"volume gone", func(st *longhorn.State) { st.Volumes = nil }, "gone"},
		{"stale engine resourceVersion", func(st *longhorn.State) { longhorn.Named(st.Engines, stale).ResourceVersion = "999" }, "engine " + stale + " changed"},
		{"stale engine replaced", func(st *longhorn.State) { longhorn.Named(st.Engines, stale).UID = types.UID("new") }, "replaced"},
		{"stale engine deactivated", func(st *longhorn.State) { longhorn.Named(st.Engines, stale).Spec.Active = false }, "engine " + stale + " changed"},
		{"stale engine gone", func(st *longhorn.State) { removeEngine(st, stale) }, "is gone"},
		{"engine appeared", func(st *longhorn.State) {
			e := *longhorn.Named(st.Engines, stale)
			e.Name, e.UID = "vol-e-extra", "uid-extra"
			st.Engines = append(st.Engines, e)
		}, "appeared"},
		{"replica flag flipped", func(st *longhorn.State) { st.Replicas[0].Spec.Active = !st.Replicas[0].Spec.Active }, "replica"},
		{"replica gone", func(st *longhorn.State) { st.Replicas = st.Replicas[1:] }, "replica"},
		{"version upgraded", func(st *longhorn.State) { st.Version = longhorn.MustParseVersion(testenv.L14f) }, "version changed"},
		{"volume moved", func(st *longhorn.State) {
			v := st.Volume("vol")
			v.Spec.NodeID, v.Status.CurrentNodeID = testenv.NodeA, testenv.NodeA
		}, "the engine to keep is now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := stateOf(testenv.TwoActiveEngines(testenv.L14a, "vol"))
			planned := planOne(t, st, "vol", StrategyAuto)
			if !planned.Acts() {
				t.Fatalf("plan does not act: %s", planned.Why)
			}
			tt.mutate(st)
			fresh := planOne(t, st, "vol", StrategyAuto)
			got := changedSince(planned, fresh)
			switch {
			case tt.want == "" && got != "":
				t.Errorf("changedSince = %q, want no change", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("changedSince = %q, want it to mention %q", got, tt.want)
			}
		})
	}
}

// Even a volume-level change that keeps the resourceVersion (impossible on a
// real server, but the comparison must not rest on one field) is caught by
// re-planning: a failed precondition in the fresh read means no action.
func TestChangedSinceReplans(t *testing.T) {
	st := stateOf(testenv.TwoActiveEngines(testenv.L14a, "vol"))
	planned := planOne(t, st, "vol", StrategyAuto)
	st.Volume("vol").Spec.MigrationNodeID = testenv.NodeA
	fresh := planOne(t, st, "vol", StrategyAuto)
	if got := changedSince(planned, fresh); got == "" {
		t.Fatal("a migration requested after the plan was not noticed")
	}
}

func TestPlanStateSelectsAndSorts(t *testing.T) {
	o := testenv.TwoActiveEngines(testenv.L14a, "b-vol")
	o.Add(testenv.Healthy(testenv.L14a, "a-vol"))
	st := stateOf(o)
	res := detect.Classify(st, detect.Options{SkipOrphans: true})
	p := planState(st, res, nil, StrategyAuto)
	if len(p.Volumes) != 2 || p.Volumes[0].Volume != "a-vol" || p.Volumes[1].Volume != "b-vol" {
		t.Fatalf("volumes %+v", p.Volumes)
	}
	if p.Volumes[0].Acts() || staticOutcome(p.Volumes[0]).Result != ResultHealthy {
		t.Errorf("healthy volume planned as %s", p.Volumes[0].Action)
	}
	if len(p.Acting()) != 1 || p.Acting()[0].Volume != "b-vol" {
		t.Errorf("acting = %+v", p.Acting())
	}
	one := planState(st, res, []string{"b-vol", "b-vol"}, StrategyAuto)
	if len(one.Volumes) != 1 {
		t.Errorf("a name given twice planned %d times", len(one.Volumes))
	}
}

// Refused, in-flight and healthy volumes get the right static result.
func TestStaticOutcomes(t *testing.T) {
	tests := []struct {
		build func(string, string) *testenv.Objects
		want  Result
	}{
		{testenv.Healthy, ResultHealthy},
		{testenv.MidMigration, ResultInFlight},
		{testenv.Issue4827, ResultRefused},
	}
	for _, tt := range tests {
		st := stateOf(tt.build(testenv.L14a, "vol"))
		p := planOne(t, st, "vol", StrategyAuto)
		if got := staticOutcome(p).Result; got != tt.want || p.Acts() {
			t.Errorf("result %s (acts=%t), want %s: %s", got, p.Acts(), tt.want, p.Why)
		}
	}
	st := stateOf(testenv.TwoActiveEngines(testenv.L16, "vol"))
	if got := staticOutcome(planOne(t, st, "vol", StrategyAuto)).Result; got != ResultRefused {
		t.Errorf("two active engines on a fixed release: %s, want refused", got)
	}
}

// TestChooseActionEnginesOnOneNode: the extra engine of EnginesOnOneNode
// is deleted under auto and delete; deactivating an inactive engine would
// change nothing, so --strategy=deactivate does not act.
func TestChooseActionEnginesOnOneNode(t *testing.T) {
	f := detect.Finding{Type: detect.TypeEnginesOnOneNode, Action: detect.ActionDelete, Keep: "e-0", Stale: []string{"e-1"}}
	ver := longhorn.MustParseVersion("v1.5.3")
	for s, want := range map[Strategy]detect.Action{StrategyAuto: detect.ActionDelete, StrategyDelete: detect.ActionDelete, StrategyDeactivate: detect.ActionNone} {
		if got, why := chooseAction(f, ver, s); got != want {
			t.Errorf("--strategy=%s: %s (%s), want %s", s, got, why, want)
		}
	}
	f.Action = detect.ActionNone // detect refused: no strategy acts
	if got, _ := chooseAction(f, ver, StrategyDelete); got != detect.ActionNone {
		t.Errorf("refused finding: %s", got)
	}
}
