package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// What each command does when Kubernetes' RBAC authorizer refuses part of
// what it needs: a read it can do without degrades with a warning, a read
// it needs ends it with one error line, a refused write changes nothing.

// resourceVersions maps "resource/name" to resourceVersion for every
// Longhorn object of the namespace: a write shows as a changed entry.
func resourceVersions(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	out, err := testenv.ResourceVersions(ctx, cluster, longhorn.AllResources)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readLog(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fix.ActionLogName))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var longhornRead = rbacv1.PolicyRule{APIGroups: []string{"longhorn.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}

// Instance managers are optional to scan: without them it still reports
// the finding, and warns that orphan engine processes were not checked.
func TestScanWithoutInstanceManagerRights(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	kc := userWith(t, []rbacv1.PolicyRule{{APIGroups: []string{"longhorn.io"},
		Resources: []string{"volumes", "settings", "replicas", "engines", "volumeattachments"}, Verbs: []string{"get", "list"}}})
	r := kubectlAs(ctx, t, kc, "longhorn-engines", "scan", "-o", "name")
	if r.Code != 1 || r.Stdout != "volume.longhorn.io/"+stuckVolume+"\n" {
		t.Fatalf("want the finding and exit 1:\n%v", r)
	}
	if !strings.Contains(r.Stderr, "warning: instance managers not read") {
		t.Errorf("want a warning about instance managers:\n%v", r)
	}
}

// A user who may read but not write: the repair fails at its first write
// (the replica flags), says so with the verb and resource, logs the
// attempt, and nothing changes. A user who may do nothing: one error line.
func TestFixForbidden(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	before := resourceVersions(ctx, t)
	dir := filepath.Join(t.TempDir(), "backup")
	r := kubectlAs(ctx, t, userWith(t, []rbacv1.PolicyRule{longhornRead}), "longhorn-engines", "fix", stuckVolume, "--yes", "--backup-dir", dir, "--timeout", "30s")
	if r.Code != cmdutil.ExitNeedsAction ||
		!strings.Contains(r.Stdout, `volume.longhorn.io "`+stuckVolume+`" failed: forbidden: cannot patch replicas.longhorn.io in namespace "longhorn-system"`) {
		t.Errorf("read-only user: want exit %d and the forbidden patch:\n%v", cmdutil.ExitNeedsAction, r)
	}
	if log := readLog(t, dir); !strings.Contains(log, "attempt") || !strings.Contains(log, "error=") {
		t.Errorf("actions.log lacks the attempt and its error:\n%s", log)
	}
	testenv.AssertUnchanged(t, before, resourceVersions(ctx, t))

	r = kubectlAs(ctx, t, userWith(t, nil), "longhorn-engines", "fix", stuckVolume, "--yes", "--backup-dir", dir)
	if r.Code != cmdutil.ExitNoCheck || !strings.HasPrefix(r.Stderr, "error: forbidden: cannot get volumes.longhorn.io") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("no rights: want exit %d and one line \"error: forbidden: cannot get volumes.longhorn.io ...\":\n%v", cmdutil.ExitNoCheck, r)
	}
	testenv.AssertUnchanged(t, before, resourceVersions(ctx, t))
}

// A backup ConfigMap the server refuses means no write at all.
func TestFixBackupToConfigMapForbidden(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	before := resourceVersions(ctx, t)
	write := rbacv1.PolicyRule{APIGroups: []string{"longhorn.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch", "patch", "delete"}}
	dir := filepath.Join(t.TempDir(), "backup")
	r := kubectlAs(ctx, t, userWith(t, []rbacv1.PolicyRule{write}), "longhorn-engines", "fix", stuckVolume, "--yes", "--wait=false",
		"--backup-dir", dir, "--backup-to", "configmap", "--timeout", "30s")
	if r.Code != cmdutil.ExitNeedsAction ||
		!strings.Contains(r.Stdout, `volume.longhorn.io "`+stuckVolume+`" failed: backup failed, nothing written: creating ConfigMap longhorn-engines-`) ||
		!strings.Contains(r.Stdout, "forbidden") {
		t.Errorf("want exit %d and the refused ConfigMap:\n%v", cmdutil.ExitNeedsAction, r)
	}
	if log := readLog(t, dir); strings.Contains(log, "attempt") {
		t.Errorf("a write was attempted:\n%s", log)
	}
	testenv.AssertUnchanged(t, before, resourceVersions(ctx, t))
	cms, err := cluster.Client().CoreV1().ConfigMaps(cluster.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: fix.LabelManagedBy + "=" + fix.ManagedBy})
	if err != nil || len(cms.Items) != 0 {
		t.Errorf("backup ConfigMaps: %v %v", cms, err)
	}
}
