package scan_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// simGenerations are the affected releases the simulator tests run, with the
// action scan proposes for the stuck volume on each.
var simGenerations = []struct {
	version string
	action  detect.Action
}{
	{"v1.4.3", detect.ActionDeactivate},
	{"v1.5.1", detect.ActionDelete},
}

// reachScenarios empties Longhorn's namespace and reaches every scenario in
// it through a simulator of version, which runs until the test ends.
func reachScenarios(t *testing.T, version string) (context.Context, *lhsim.Sim) {
	t.Helper()
	ctx, cancel := context.WithTimeout(reset(t), 2*time.Minute)
	t.Cleanup(cancel)
	sim := testenv.StartScenarioSim(ctx, t, cluster.RESTConfig(), "", version)
	if err := testenv.ReachAll(ctx, &testenv.SimCluster{Sim: sim, Dynamic: cluster.Dynamic()}, testenv.Scenarios); err != nil {
		t.Fatal(err)
	}
	return ctx, sim
}

// TestScanFindsTheSimulatedBug reaches every scenario through the simulated
// Longhorn controllers (the bug comes from an injected delete failure during
// confirm, not from hand-written objects) and checks scan's verdicts.
func TestScanFindsTheSimulatedBug(t *testing.T) {
	for _, tc := range simGenerations {
		t.Run(tc.version, func(t *testing.T) {
			ctx, sim := reachScenarios(t, tc.version)
			if errs := sim.SyncErrors("two-active-engines"); len(errs) == 0 || !strings.Contains(errs[len(errs)-1], "BUG: found the second active engine") {
				t.Fatalf("the simulator should report the BUG error, got %q", errs)
			}
			res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "scan", "-o", "json")
			if res.Code != 1 {
				t.Fatalf("want exit 1:\n%s", res)
			}
			got := map[string]detect.Finding{}
			for _, f := range decode(t, res.Stdout).Findings {
				got[f.Volume] = f
			}
			want := map[string]struct {
				typ    detect.Type
				action detect.Action
			}{
				"mid-migration":      {detect.TypeMigrationInFlight, detect.ActionNone},
				"two-active-engines": {detect.TypeMultipleActiveEngines, tc.action},
				"pending-cleanup":    {detect.TypePendingCleanup, detect.ActionWait},
				"issue-4827":         {detect.TypeMultipleActiveEngines, detect.ActionNone},
			}
			for vol, w := range want {
				f := got[vol]
				if f.Type != w.typ || f.Action != w.action {
					t.Errorf("%s: got %s/%s, want %s/%s: %s", vol, f.Type, f.Action, w.typ, w.action, f.Reason)
				}
			}
			for _, vol := range []string{"healthy", "idle-migratable"} {
				if f, ok := got[vol]; ok {
					t.Errorf("%s should be healthy, got %s: %s", vol, f.Type, f.Reason)
				}
			}
			stuck := got["two-active-engines"]
			if stuck.Evidence.CurrentNodeID != testenv.NodeB || len(stuck.Stale) != 1 {
				t.Fatalf("evidence: %+v", stuck.Evidence)
			}
			for _, e := range stuck.Evidence.Engines {
				if (e.Name == stuck.Keep) != (e.NodeID == testenv.NodeB) {
					t.Errorf("keep must be the engine on node-b: keep=%s, engine %s on %s", stuck.Keep, e.Name, e.NodeID)
				}
			}
		})
	}
}
