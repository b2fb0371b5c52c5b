package scan_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// drainFile writes the bundle scenario plus an engine process with no
// Engine CR on node-a, as a multi-document YAML file.
func drainFile(t *testing.T, withIMs bool) string {
	t.Helper()
	ns := testenv.BundleNamespace
	var b strings.Builder
	for _, o := range testenv.BundleScenario(ns, "v1.4.3") {
		if o["kind"] == "InstanceManager" {
			continue
		}
		b.WriteString("---\n" + string(testenv.KubectlYAML(t, o)))
	}
	if withIMs {
		b.WriteString("---\n" + string(testenv.KubectlYAML(t, testenv.JSONEngineIM(ns, "node-a", "pvc-stuck-e-aaaa1111", "pvc-ok-e-cccc3333", "pvc-gone-e-0"))))
		b.WriteString("---\n" + string(testenv.KubectlYAML(t, testenv.JSONEngineIM(ns, "node-b", "pvc-stuck-e-bbbb2222", "pvc-logonly-e-dddd4444"))))
	}
	p := filepath.Join(t.TempDir(), "dump.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScanNode: `scan --node` lists the processes holding the node's
// drain with the finding that explains each, marks the orphan, says the
// budgets were not in the input (exit 2, never "nothing holds"); an
// unknown node and --node with a volume are one error line each.
func TestScanNode(t *testing.T) {
	p := drainFile(t, true)
	r := offRun(t, "scan", "-f", p, "--node", "node-a")
	for _, want := range []string{
		"engine pvc-stuck-e-aaaa1111", "MultipleActiveEngines",
		"engine pvc-gone-e-0", "orphan (no Engine CR)",
		"engine pvc-ok-e-cccc3333",
		"node-a: not checked: poddisruptionbudgets not read",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("scan --node node-a: no %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.Stdout, "pvc-logonly") {
		t.Errorf("scan --node node-a shows node-b's process:\n%s", r)
	}
	if r.Code != 2 || !strings.HasPrefix(r.Stderr, "error: could not check what holds node node-a's drain") {
		t.Errorf("budgets not in the input: want exit 2 and the error line:\n%s", r)
	}

	r = offRun(t, "scan", "-f", p, "--node", "node-a", "-o", "json")
	var rep struct {
		Kind string `json:"kind"`
		Node struct {
			Node      string `json:"node"`
			Processes []struct {
				Name   string `json:"name"`
				Orphan bool   `json:"orphan"`
			} `json:"processes"`
			NotChecked []string `json:"notChecked"`
		} `json:"node"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	orphans := 0
	for _, p := range rep.Node.Processes {
		if p.Orphan {
			orphans++
		}
	}
	if rep.Kind != "NodeDrainReport" || rep.Node.Node != "node-a" || len(rep.Node.Processes) != 3 || orphans != 1 || len(rep.Node.NotChecked) == 0 {
		t.Errorf("scan --node -o json: %+v", rep)
	}

	for _, args := range [][]string{
		{"scan", "-f", p, "--node", "node-z"},
		{"scan", "-f", p, "--node", "node-a", "pvc-ok"},
	} {
		r = offRun(t, args...)
		if r.Code != 2 || !strings.HasPrefix(r.Stderr, "error: ") || strings.Count(r.Stderr, "\n") != 1 || r.Stdout != "" {
			t.Errorf("%v: want one error line and exit 2:\n%s", args, r)
		}
	}

	// without instance managers the processes are unknown: said, exit 2
	r = offRun(t, "scan", "-f", drainFile(t, false), "--node", "node-a")
	if r.Code != 2 || !strings.Contains(r.Stdout, "not checked: instance managers not read") {
		t.Errorf("no instance managers: want them named as not checked and exit 2:\n%s", r)
	}
}
