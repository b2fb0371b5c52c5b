package fix_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// configMapRecorder stands in for the core/v1 ConfigMap API, which the test
// API server (apiextensions only) does not serve. At each create it reads
// the stale engine from the real server, so the test sees what the cluster
// looked like when the backup was made.
type configMapRecorder struct {
	t      *testing.T
	ctx    context.Context
	engine string

	mu      sync.Mutex
	created []*corev1.ConfigMap
	dryRuns int
	// activeAtCreate is the stale engine's spec.active at the (last) create.
	activeAtCreate bool
}

func (r *configMapRecorder) Create(_ context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(opts.DryRun) > 0 {
		r.dryRuns++
		return cm, nil
	}
	active, _, _ := unstructured.NestedBool(getEngine(r.t, r.ctx, r.engine).Object, "spec", "active")
	r.activeAtCreate = active
	r.created = append(r.created, cm.DeepCopy())
	return cm, nil
}

// With --backup-to configmap the backup and the action log are in a
// ConfigMap created before the write; its objects.yaml restores the engine
// with the real kubectl apply against the real API server.
func TestFixBackupToConfigMap(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
	stale := testenv.EngineName(testenv.L14a, "vol", 0)
	rec := &configMapRecorder{t: t, ctx: ctx, engine: stale}
	dir := filepath.Join(t.TempDir(), "backup")

	res := cli(t, cluster.KubeconfigPath(), fix.Hooks{ConfigMaps: rec}).Run(ctx, fixArgs("vol", "--yes", "--wait=false", "--backup-dir", dir, "--backup-to", "configmap")...)
	if res.Code != cmdutil.ExitOK {
		t.Fatalf("exit %d", res.Code)
	}
	if len(rec.created) != 1 {
		t.Fatalf("%d ConfigMaps created, want 1", len(rec.created))
	}
	if !rec.activeAtCreate {
		t.Error("the ConfigMap was created after the engine was deactivated")
	}
	cm := rec.created[0]
	runID := cm.Labels[fix.LabelRunID]
	if cm.Labels[fix.LabelManagedBy] != fix.ManagedBy || cm.Labels[fix.LabelVolume] != "vol" || runID == "" {
		t.Errorf("labels %v", cm.Labels)
	}
	if cm.Name != "longhorn-engines-"+runID+"-vol" || cm.Immutable == nil || !*cm.Immutable {
		t.Errorf("name %q immutable %v", cm.Name, cm.Immutable)
	}
	if file := readFile(t, filepath.Join(dir, "vol.yaml")); cm.Data[fix.ConfigMapObjectsKey] != file {
		t.Errorf("objects.yaml differs from the backup file:\n%s", cm.Data[fix.ConfigMapObjectsKey])
	}
	testenv.Contains(t, "ConfigMap actions.log", cm.Data[fix.ConfigMapLogKey], "plan volume=vol", "backup volume=vol file=")
	testenv.Contains(t, "actions.log", readFile(t, filepath.Join(dir, fix.ActionLogName)), "backup volume=vol configmap=longhorn-system/"+cm.Name)
	testenv.Contains(t, "stderr", res.Stderr, "get configmaps -l "+fix.LabelRunID+"="+runID)

	// Restore from the ConfigMap alone, as docs/backups.md says.
	if active, _, _ := unstructured.NestedBool(getEngine(t, ctx, stale).Object, "spec", "active"); active {
		t.Fatal("the stale engine was not deactivated")
	}
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(cm.Data[fix.ConfigMapObjectsKey]), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "/usr/bin/kubectl", "--kubeconfig", cluster.KubeconfigPath(), "apply", "-f", file).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	if active, _, _ := unstructured.NestedBool(getEngine(t, ctx, stale).Object, "spec", "active"); !active {
		t.Error("kubectl apply -f of the ConfigMap's objects.yaml did not restore spec.active")
	}
}

// A ConfigMap create that fails means no write: here the API server
// refuses it as not found, since it serves no core/v1. (Refused as
// forbidden by RBAC: internal/e2e TestFixBackupToConfigMapForbidden;
// created for real: pkg/fixwatch TestDeployRoles.)
func TestFixBackupToConfigMapFailsBeforeTheWrite(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
	before := versions(t, ctx)
	dir := filepath.Join(t.TempDir(), "backup")
	res := runFix(t, ctx, "vol", "--yes", "--wait=false", "--backup-dir", dir, "--backup-to", "configmap")
	if res.Code != cmdutil.ExitNeedsAction {
		t.Errorf("exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol" failed: backup failed, nothing written: creating ConfigMap longhorn-engines-`,
		"the server could not find the requested resource")
	if log := readFile(t, filepath.Join(dir, fix.ActionLogName)); strings.Contains(log, "attempt") {
		t.Errorf("a write was attempted:\n%s", log)
	}
	testenv.AssertUnchanged(t, before, versions(t, ctx))
}
