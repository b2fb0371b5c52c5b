package scan_test

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

// want is the verdict scan must give for a scenario on a release.
type want struct {
	typ    detect.Type // "" = healthy (no finding)
	action detect.Action
}

// generations: the action scan must choose for the stuck volume
// (two-active-engines, a MultipleActiveEngines finding) on each release
// class; the other scenarios' verdicts are the same on every release.
var generations = []struct {
	version string
	stuck   detect.Action
}{
	{"v1.3.2", detect.ActionDeactivate},
	{"v1.4.3", detect.ActionDeactivate},
	{"v1.4.4", detect.ActionDeactivate},
	{"v1.5.1", detect.ActionDelete},
	{"v1.5.2", detect.ActionDeactivate},
	{"v1.6.0", detect.ActionDeactivate},
}

// common verdicts, the same on every release.
var common = map[string]want{
	"healthy":         {},
	"idle-migratable": {},
	"mid-migration":   {detect.TypeMigrationInFlight, detect.ActionNone},
	"pending-cleanup": {detect.TypePendingCleanup, detect.ActionWait},
	"issue-4827":      {detect.TypeMultipleActiveEngines, detect.ActionNone},
}

func TestScanClassifiesEveryScenarioOnEveryGeneration(t *testing.T) {
	for _, g := range generations {
		t.Run(g.version, func(t *testing.T) {
			ctx := reset(t)
			objs := testenv.Nodes()
			for _, s := range testenv.Scenarios {
				objs.Add(s.Build(g.version, s.Name))
			}
			if err := testenv.Create(ctx, cluster, objs); err != nil {
				t.Fatal(err)
			}
			res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "scan", "-o", "json")
			if res.Code != 1 {
				t.Fatalf("want exit 1 (findings), got:\n%s", res)
			}
			r := decode(t, res.Stdout)
			if r.LonghornVersion != g.version {
				t.Errorf("longhornVersion = %q, want %q", r.LonghornVersion, g.version)
			}
			got := map[string]detect.Finding{}
			for _, f := range r.Findings {
				got[f.Volume] = f
			}
			for _, s := range testenv.Scenarios {
				w := common[s.Name]
				if s.Name == "two-active-engines" {
					w = want{detect.TypeMultipleActiveEngines, g.stuck}
				}
				f, found := got[s.Name]
				switch {
				case w.typ == "" && found:
					t.Errorf("%s: want healthy, got %s (%s)", s.Name, f.Type, f.Reason)
				case w.typ == "":
				case !found:
					t.Errorf("%s: want %s, got no finding", s.Name, w.typ)
				case f.Type != w.typ || f.Action != w.action:
					t.Errorf("%s: got %s/%s, want %s/%s (%s)", s.Name, f.Type, f.Action, w.typ, w.action, f.Reason)
				}
			}
			stuck := got["two-active-engines"]
			if wantKeep := testenv.EngineName(g.version, "two-active-engines", 1); stuck.Keep != wantKeep {
				t.Errorf("keep = %q, want the engine on node-b %q", stuck.Keep, wantKeep)
			}
			if wantStale := testenv.EngineName(g.version, "two-active-engines", 0); len(stuck.Stale) != 1 || stuck.Stale[0] != wantStale {
				t.Errorf("stale = %v, want [%s]", stuck.Stale, wantStale)
			}
			refused := got["issue-4827"]
			if !refused.Refused() && !longhorn.MustParseVersion(g.version).DeterministicEngineNames() {
				t.Errorf("issue-4827 should fail a precondition: %+v", refused.Preconditions)
			}
		})
	}
}

func decode(t *testing.T, out string) *scan.Report {
	t.Helper()
	return testenv.DecodeReport[scan.Report](t, out, scan.ReportKind)
}

func TestScanHealthyClusterExitsZero(t *testing.T) {
	ctx := reset(t)
	objs := testenv.Nodes().Add(testenv.Healthy("v1.4.3", "vol-1")).Add(testenv.Healthy("v1.4.3", "vol-2"))
	if err := testenv.Create(ctx, cluster, objs); err != nil {
		t.Fatal(err)
	}
	res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "scan")
	if res.Code != 0 {
		t.Fatalf("want exit 0:\n%s", res)
	}
	if !strings.Contains(res.Stderr, "No engine problems found: 2 volume(s) checked") {
		t.Errorf("summary missing:\n%s", res)
	}
}
