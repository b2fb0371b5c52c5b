package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every manifest of deploy/ is accepted by Kubernetes' own API server, as
// `kubectl apply --dry-run=server` sends it: schema, defaulting and
// admission of the ServiceAccount, Roles, bindings, the Job and the Service
// run as they would on a cluster, and nothing is stored. The
// ServiceMonitor and PrometheusRule are checked against minimal CRDs of the
// Prometheus Operator's kinds (testdata/monitoring-crds.yaml).
func TestDeployServerDryRun(t *testing.T) {
	ctx := begin(t)
	root, err := filepath.Abs(moduleRoot) // kubectl runs in a folder of its own
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no deploy/*.yaml: %v", err)
	}
	crds := filepath.Join(root, "internal", "e2e", "testdata", "monitoring-crds.yaml")
	if r := kubectl(ctx, t, "apply", "-f", crds); r.Code != 0 {
		t.Fatalf("kubectl apply -f %s:\n%v", crds, r)
	}
	if r := kubectl(ctx, t, "wait", "--for", "condition=Established", "--timeout", "60s",
		"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com"); r.Code != 0 {
		t.Fatalf("the monitoring CRDs are not served:\n%v", r)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := kubectl(ctx, t, "apply", "--dry-run=server", "-f", f)
			if r.Code != 0 || !strings.Contains(r.Stdout, "(server dry run)") || r.Stderr != "" {
				t.Fatalf("kubectl apply --dry-run=server -f %s:\n%v", f, r)
			}
		})
	}
	// A server dry run stores nothing.
	r := kubectl(ctx, t, "get", "jobs,serviceaccounts,roles,rolebindings,services,servicemonitors,prometheusrules", "-n", "longhorn-system", "-o", "name")
	if strings.Contains(r.Stdout, "longhorn-engines") {
		t.Errorf("the dry run stored objects:\n%v", r)
	}
}
