package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every manifest of deploy/ is accepted by Kubernetes' own API server, as
// `kubectl apply --dry-run=server` sends it: schema, defaulting and
// admission of the ServiceAccount, Roles, bindings and the Job run as they
// would on a cluster, and nothing is stored.
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
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := kubectl(ctx, t, "apply", "--dry-run=server", "-f", f)
			if r.Code != 0 || !strings.Contains(r.Stdout, "(server dry run)") || r.Stderr != "" {
				t.Fatalf("kubectl apply --dry-run=server -f %s:\n%v", f, r)
			}
		})
	}
	// A server dry run stores nothing.
	r := kubectl(ctx, t, "get", "jobs,serviceaccounts,roles,rolebindings", "-n", "longhorn-system", "-o", "name")
	if strings.Contains(r.Stdout, "longhorn-engines") {
		t.Errorf("the dry run stored objects:\n%v", r)
	}
}
