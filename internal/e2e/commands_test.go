package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The #6642 state on Longhorn 1.4.3, where fix deactivates the stale engine.
const (
	stuckVersion = "v1.4.3"
	stuckVolume  = "pvc-stuck"
)

var (
	survivor = testenv.EngineName(stuckVersion, stuckVolume, 1) // on node-b, serves I/O
	stale    = testenv.EngineName(stuckVersion, stuckVolume, 0) // on node-a
)

// create creates the scenario nodes and the given objects.
func create(ctx context.Context, t *testing.T, objs ...*testenv.Objects) {
	t.Helper()
	o := testenv.Nodes()
	for _, p := range objs {
		o.Add(p)
	}
	if err := testenv.Create(ctx, cluster, o); err != nil {
		t.Fatal(err)
	}
}

func stuck() *testenv.Objects { return testenv.TwoActiveEngines(stuckVersion, stuckVolume) }

func engineActive(ctx context.Context, t *testing.T, name string) bool {
	t.Helper()
	u, err := cluster.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(cluster.Namespace()).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	active, _, _ := unstructured.NestedBool(u.Object, "spec", "active")
	return active
}

// scanReport is the part of `scan -o json` these tests read.
type scanReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Findings   []struct {
		Volume string   `json:"volume"`
		Type   string   `json:"type"`
		Keep   string   `json:"keep"`
		Stale  []string `json:"stale"`
		Action string   `json:"action"`
	} `json:"findings"`
}

func TestScanThroughKubectl(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, testenv.Healthy(stuckVersion, "pvc-fine"))
	// Exit 0 like `kubectl diff` when nothing needs action.
	if r := kubectl(ctx, t, "longhorn-engines", "scan"); r.Code != 0 {
		t.Errorf("scan of a healthy volume should exit 0:\n%v", r)
	}

	if err := cluster.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	create(ctx, t, testenv.Healthy(stuckVersion, "pvc-fine"), stuck())
	r := kubectl(ctx, t, "longhorn-engines", "scan")
	if r.Code != 1 {
		t.Errorf("scan of a stuck volume should exit 1:\n%v", r)
	}
	// The table names engines by suffix@node; the volume column names the volume.
	for _, w := range []string{stuckVolume, strings.TrimPrefix(survivor, stuckVolume+"-") + "@node-b", strings.TrimPrefix(stale, stuckVolume+"-") + "@node-a"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("scan table lacks %s:\n%v", w, r)
		}
	}

	r = kubectl(ctx, t, "longhorn-engines", "scan", stuckVolume, "-o", "json")
	var rep scanReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("scan -o json: %v\n%v", err, r)
	}
	if rep.Kind != "ScanReport" || len(rep.Findings) != 1 {
		t.Fatalf("scan -o json: kind %q, %d findings, want one ScanReport finding:\n%s", rep.Kind, len(rep.Findings), r.Stdout)
	}
	f := rep.Findings[0]
	if f.Type != "MultipleActiveEngines" || f.Keep != survivor || len(f.Stale) != 1 || f.Stale[0] != stale || f.Action != "deactivate" {
		t.Errorf("finding %+v, want MultipleActiveEngines keep %s, deactivate %s", f, survivor, stale)
	}
}

func TestFixDryRunThroughKubectl(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	r := kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--dry-run=client")
	skipIfNotImplemented(t, r)
	want := `engine.longhorn.io "` + stale + `" deactivated (dry run)`
	if r.Code != 0 || !strings.Contains(r.Stdout, want+"\n") {
		t.Errorf("fix --dry-run=client: want exit 0 and %q on stdout:\n%v", want, r)
	}
	if !engineActive(ctx, t, stale) || !engineActive(ctx, t, survivor) {
		t.Errorf("a client dry run changed an engine")
	}
}

func TestMigrateStatusThroughKubectl(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, testenv.MidMigration(stuckVersion, "pvc-moving"), stuck())
	for vol, phase := range map[string]string{"pvc-moving": "Ready", stuckVolume: "NeedsAttention"} {
		r := kubectl(ctx, t, "longhorn-engines", "migrate", "status", vol, "-o", "json")
		skipIfNotImplemented(t, r)
		var st struct {
			Phase string `json:"phase"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || r.Code != 0 || st.Phase != phase {
			t.Errorf("migrate status %s: phase %q (%v), want %s:\n%v", vol, st.Phase, err, phase, r)
		}
	}
}

// skipIfNotImplemented lets this suite land before a command does.
func skipIfNotImplemented(t *testing.T, r result) {
	t.Helper()
	if strings.Contains(r.Stderr, "not implemented") {
		t.Skipf("command not implemented yet: %s", strings.TrimSpace(r.Stderr))
	}
}
