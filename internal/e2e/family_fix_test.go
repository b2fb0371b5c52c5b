package e2e

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// fix clears a stale status.currentMigrationNodeID on Longhorn 1.5.3 through
// kubectl, as a user holding exactly docs/rbac.md's fix Role, on
// Kubernetes' own kube-apiserver: the field is empty afterwards, the repair
// verifies (no controller is needed to judge a detached volume), and the
// volume carries RepairApplied (action ClearMigrationNodeID) and
// RepairVerified.
func TestFixClearsStaleMigrationNodeIDWithTheDocumentedRole(t *testing.T) {
	fixRole := documentedRoles(t)["longhorn-engines-fix"]
	ctx := begin(t)
	const vol = "pvc-cmn-fix"
	create(ctx, t, testenv.StaleMigrationNodeID("v1.5.3", vol))
	r := kubectlAs(ctx, t, userWith(t, fixRole), "longhorn-engines", "fix", vol, "--yes", "--backup-dir", t.TempDir(), "--timeout", "30s")
	skipIfNotImplemented(t, r)
	if r.Code != cmdutil.ExitOK || !strings.Contains(r.Stdout, `volume.longhorn.io "`+vol+`" patched`) || !strings.Contains(r.Stdout, `volume.longhorn.io "`+vol+`" repaired`) {
		t.Fatalf("fix with the documented fix Role: want exit 0, the patch and the verification:\n%v", r)
	}
	u, err := cluster.Dynamic().Resource(longhorn.Volumes.GVR()).Namespace(cluster.Namespace()).Get(ctx, vol, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm, _, _ := unstructured.NestedString(u.Object, "status", "currentMigrationNodeID"); cm != "" {
		t.Errorf("status.currentMigrationNodeID %q after the repair", cm)
	}
	for _, ev := range awaitEvents(ctx, t, vol, fix.ReasonRepairApplied, fix.ReasonRepairVerified) {
		if ev.Reason == fix.ReasonRepairApplied && (ev.Type != "Normal" || ev.Action != "ClearMigrationNodeID" || !strings.Contains(ev.Note, "currentMigrationNodeID")) {
			t.Errorf("RepairApplied: type %s, action %s, note %q", ev.Type, ev.Action, ev.Note)
		}
	}
}
