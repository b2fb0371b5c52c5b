package preflight_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// These tests reset the cluster's Longhorn namespace: they run before the
// parallel simulator tests, which use namespaces of their own.

func reset(t *testing.T) context.Context {
	t.Helper()
	return cluster.ResetForTest(t, 2*time.Minute)
}

// lastLine is the last line of stderr: the one error line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestPreflightCouldNotCheck(t *testing.T) {
	ctx := reset(t)
	res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "preflight")
	if res.Code != 2 || res.Stdout != "" || !strings.HasPrefix(res.Stderr, "error: no Longhorn found in namespace") || strings.Count(res.Stderr, "\n") != 1 {
		t.Errorf("no Longhorn: want exit 2 and one error line:\n%s", res)
	}

	// Objects but no version setting: whether the release is affected is
	// unknown, so the check is incomplete: the report, then exit 2.
	o := testenv.Healthy("v1.4.3", "pvc-1")
	o.Version = ""
	if err := testenv.Create(ctx, cluster, o); err != nil {
		t.Fatal(err)
	}
	res = clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "preflight", "-o", "json")
	if res.Code != 2 || !strings.HasPrefix(lastLine(res.Stderr), "error: could not check the Longhorn release (setting current-longhorn-version not found)") {
		t.Fatalf("unknown release: want exit 2 and the reason:\n%s", res)
	}
	if r := decode(t, res.Stdout); r.Verdict != "unchecked" || r.Release.Class != "unknown" || r.Recommendation.GuardCommand != "" {
		t.Errorf("unknown release report: %+v", r)
	}
}

func TestPreflightRefusesBadInput(t *testing.T) {
	ctx := reset(t)
	if err := testenv.Create(ctx, cluster, testenv.Healthy("v1.5.1", "pvc-1")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--to", "latest"}, `error: --to: not a Longhorn version: "latest"`},
		{[]string{"-o", "wide"}, `error: unknown output format "wide": use one of table, json, yaml`},
		{[]string{"--for", "0s"}, "error: --for must be positive"},
		{[]string{"--bundle", "x.zip", "-f", "y.yaml"}, "error: --bundle and -f/--filename cannot be used together"},
		{[]string{"pvc-1"}, `error: unknown command "pvc-1"`},
	} {
		res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, append([]string{"preflight"}, tc.args...)...)
		if res.Code != 2 || res.Stdout != "" || !strings.HasPrefix(res.Stderr, tc.want) || strings.Count(res.Stderr, "\n") != 1 {
			t.Errorf("preflight %v: want exit 2, nothing on stdout and one line %q:\n%s", tc.args, tc.want, res)
		}
	}
}

// A --to that cannot be checked comes after the cluster was read: the
// report of the running release is printed, then the error, exit 2
// (docs/exit-codes.md).
func TestPreflightTargetErrorAfterTheReport(t *testing.T) {
	ctx := reset(t)
	if err := testenv.Create(ctx, cluster, testenv.Healthy("v1.5.1", "pvc-1")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		to, want string
	}{
		{"v1.4.3", "error: --to v1.4.3 is older than the running Longhorn v1.5.1: Longhorn does not support downgrades"},
		{"v1.2.6", "error: --to v1.2.6: Longhorn releases before 1.3 are not supported"},
	} {
		res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "preflight", "--to", tc.to)
		if res.Code != 2 || !strings.Contains(res.Stdout, "Longhorn v1.5.1") || !strings.Contains(res.Stderr, tc.want) || strings.Contains(res.Stdout, "Upgrade to") {
			t.Errorf("preflight --to %s: want the running release's report, then %q and exit 2:\n%s", tc.to, tc.want, res)
		}
	}
}

// A cleanup that outlasts --pending-threshold blocks; a brief one does not.
func TestPreflightPendingCleanupThatLasts(t *testing.T) {
	ctx := reset(t)
	if err := testenv.Create(ctx, cluster, testenv.Nodes().Add(testenv.PendingCleanup("v1.4.3", "pvc-pending"))); err != nil {
		t.Fatal(err)
	}
	res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "preflight", "-o", "json")
	if res.Code != 0 || len(decode(t, res.Stdout).Blockers) != 0 {
		t.Fatalf("a fresh pending cleanup is expected after a confirm and blocks nothing:\n%s", res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res = clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "preflight", "-o", "json", "--pending-threshold", "1ms")
		if res.Code == 1 || time.Now().After(deadline) {
			break
		}
	}
	r := decode(t, res.Stdout)
	if res.Code != 1 || len(r.Blockers) != 1 {
		t.Fatalf("want exit 1 and one blocker:\n%s", res)
	}
	b := r.Blockers[0]
	if b.Volume != "pvc-pending" || b.Type != detect.TypePendingCleanup || b.Command != "kubectl longhorn-engines scan pvc-pending -o wide" || b.Node != testenv.NodeB {
		t.Errorf("blocker: %+v", b)
	}
}

// Files without instance managers cannot show orphan engine processes,
// which block drains: the report, then exit 2.
func TestPreflightFilesWithoutInstanceManagers(t *testing.T) {
	ctx := reset(t)
	if err := testenv.Create(ctx, cluster, testenv.Nodes().Add(testenv.Healthy("v1.5.1", "pvc-1"))); err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.JSONObjectsFrom(ctx, cluster.Dynamic(), cluster.Namespace())
	if err != nil {
		t.Fatal(err)
	}
	kept := objs[:0]
	for _, o := range objs {
		if o["kind"] != "InstanceManager" {
			kept = append(kept, o)
		}
	}
	b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": kept})
	if err != nil {
		t.Fatal(err)
	}
	res := clitest.New(t, "").Input(bytes.NewReader(b)).Run(ctx, "preflight", "-f", "-")
	if res.Code != 2 || !strings.Contains(res.Stdout, "Not checked: orphan engine processes") ||
		!strings.HasPrefix(lastLine(res.Stderr), "error: could not check orphan engine processes") {
		t.Errorf("want the report, exit 2 and the reason:\n%s", res)
	}
}

// A bundle cut short or without volumes.yaml is an incomplete check: the
// report of what was read, "Not checked" naming what is missing, exit 2.
func TestPreflightIncompleteBundle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := &testenv.Bundle{CreatedAt: testenv.BundleCreated, Objects: testenv.BundleScenario(testenv.BundleNamespace, "v1.4.3")}
	whole := b.ZipData(t)
	for name, data := range map[string][]byte{"cut": whole[:3000], "half": whole[:len(whole)/2]} {
		p := filepath.Join(t.TempDir(), name+".zip")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		res := clitest.New(t, "").Run(ctx, "preflight", "--bundle", p)
		if res.Code != 2 || strings.Count(res.Stderr, "error: ") != 1 || !strings.Contains(res.Stderr, "is damaged") {
			t.Errorf("%s: want exit 2 with one error line naming the damage:\n%s", name, res)
		}
	}
}
