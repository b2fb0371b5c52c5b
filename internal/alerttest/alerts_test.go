// Package alerttest checks the alerts of deploy/guard-alerts.yaml with
// Prometheus' own tools: promtool's rule parser (`promtool check rules`) and
// its rule unit tests (`promtool test rules`) of test/alerts, against
// synthetic series. promtool is pinned in hack/tools/promtool; `make
// alerts-test` builds it and runs this package.
package alerttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

const root = "../.."

// promtool is the binary make alerts-test builds and names in $PROMTOOL;
// without it (go test ./..., where the tools may still be building) the test
// is skipped.
func promtool(t *testing.T) string {
	t.Helper()
	p := os.Getenv("PROMTOOL")
	if p == "" {
		t.Skip("PROMTOOL not set: run make alerts-test")
	}
	return p
}

// The PrometheusRule's groups are a valid Prometheus rule file, and the
// alerts fire (and stay quiet) as test/alerts says.
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	b, err := os.ReadFile(filepath.Join(root, "deploy", "guard-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &pr); err != nil || pr.Kind != "PrometheusRule" {
		t.Fatalf("deploy/guard-alerts.yaml: kind %q: %v", pr.Kind, err)
	}
	rules, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "guard-alerts.rules.yaml"), rules, 0o600); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(root, "test", "alerts", "guard-alerts.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "guard-alerts.test.yaml"), tests, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "rules", "--lint=all", "--lint-fatal", "guard-alerts.rules.yaml"},
		{"test", "rules", "guard-alerts.test.yaml"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		} else {
			t.Logf("promtool %v:\n%s", args, out)
		}
	}
}
