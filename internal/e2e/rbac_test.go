package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// documentedRoles reads the Roles and ClusterRoles of docs/rbac.md, by name.
func documentedRoles(t *testing.T) map[string][]rbacv1.PolicyRule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "rbac.md"))
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string][]rbacv1.PolicyRule{}
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(b, -1) {
		for _, doc := range bytes.Split(m[1], []byte("\n---\n")) {
			var r rbacv1.Role // a ClusterRole's kind, name and rules read the same
			if err := yaml.Unmarshal(doc, &r); err != nil {
				t.Fatalf("docs/rbac.md: %v\n%s", err, doc)
			}
			if r.Kind == "Role" || r.Kind == "ClusterRole" {
				roles[r.Name] = r.Rules
			}
		}
	}
	for _, name := range []string{"longhorn-engines-scan", "longhorn-engines-fix", "longhorn-engines-migrate", "longhorn-engines-migrate-workloads"} {
		if len(roles[name]) == 0 {
			t.Fatalf("docs/rbac.md has no rules for %s (have %v)", name, roles)
		}
	}
	return roles
}

// userWith makes a service account bound to a Role holding the given rules
// in the Longhorn namespace, as docs/rbac.md says to apply them, and returns
// its kubeconfig. Kubernetes' own RBAC authorizer decides every request.
func userWith(t *testing.T, rules ...[]rbacv1.PolicyRule) string {
	t.Helper()
	return userWithCluster(t, concat(rules), nil)
}

// userWithCluster is userWith plus a ClusterRole holding clusterRules.
func userWithCluster(t *testing.T, rules, clusterRules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path, err := cluster.UserWithRole(ctx, userName(t), rules, clusterRules)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

var users atomic.Int32

// userName is unique per call: users outlive cluster resets.
func userName(t *testing.T) string {
	base := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-"))
	return fmt.Sprintf("%s-%d", base, users.Add(1))
}

// without returns rules minus one resource.
func without(rules []rbacv1.PolicyRule, resource string) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		r = *r.DeepCopy()
		r.Resources = slices.DeleteFunc(r.Resources, func(s string) bool { return s == resource })
		out = append(out, r)
	}
	return out
}

func concat(rules [][]rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		out = append(out, r...)
	}
	return out
}

// refusedWithoutEngines: a missing permission is exit 2 and one error line
// (docs/rbac.md); here the right to list engines, taken from role.
func refusedWithoutEngines(ctx context.Context, t *testing.T, role []rbacv1.PolicyRule, command string) {
	t.Helper()
	r := kubectlAs(ctx, t, userWith(t, without(role, "engines")), "longhorn-engines", command)
	if r.Code != 2 || !strings.HasPrefix(r.Stderr, "error: forbidden: cannot list engines.longhorn.io") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("%s without engines: want exit 2 and one line \"error: forbidden: cannot list engines.longhorn.io ...\":\n%v", command, r)
	}
}

// Each command works for a user holding exactly the Role docs/rbac.md gives
// it, and the next command's extra rules are really needed.
func TestDocumentedRBAC(t *testing.T) {
	roles := documentedRoles(t)
	scanRole, fixRole := roles["longhorn-engines-scan"], roles["longhorn-engines-fix"]
	migrateRole, workloads := roles["longhorn-engines-migrate"], roles["longhorn-engines-migrate-workloads"]

	// 1.4.3: fix patches engines, migrate patches the volume; 1.5.1: fix
	// deletes engines, scan lists and migrate patches volumeattachments.
	for _, v := range []struct{ version, fixVerb, migrateWrites string }{
		{"v1.4.3", "deactivated", "volume.longhorn.io"},
		{"v1.5.1", "deleted", "volumeattachment.longhorn.io"},
	} {
		stuckObjs := testenv.TwoActiveEngines(v.version, stuckVolume)
		staleEngine := testenv.EngineName(v.version, stuckVolume, 0)

		t.Run("scan/"+v.version, func(t *testing.T) {
			ctx := begin(t)
			create(ctx, t, stuckObjs)
			r := kubectlAs(ctx, t, userWith(t, scanRole), "longhorn-engines", "scan")
			// The table names engines by suffix (e-…@node) beside their volume.
			if r.Code != 1 || !strings.Contains(r.Stdout, strings.TrimPrefix(staleEngine, stuckVolume+"-")) || strings.Contains(strings.ToLower(r.Stderr), "warning") {
				t.Errorf("scan with the scan Role: want exit 1 (a finding), no warning:\n%v", r)
			}
			refusedWithoutEngines(ctx, t, scanRole, "scan")
		})

		t.Run("preflight/"+v.version, func(t *testing.T) {
			ctx := begin(t)
			create(ctx, t, stuckObjs)
			// preflight reads what scan reads: exactly the scan Role.
			r := kubectlAs(ctx, t, userWith(t, scanRole), "longhorn-engines", "preflight")
			if r.Code != 1 || !strings.Contains(r.Stdout, "kubectl longhorn-engines fix "+stuckVolume) || strings.Contains(strings.ToLower(r.Stderr), "warning") || strings.Contains(r.Stderr, "error:") {
				t.Errorf("preflight with the scan Role: want exit 1 (a blocker and its command), no warning or error:\n%v", r)
			}
			// Orphan engine processes block drains: without instance
			// managers the check is incomplete, exit 2 after the report.
			r = kubectlAs(ctx, t, userWith(t, without(scanRole, "instancemanagers")), "longhorn-engines", "preflight")
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if r.Code != 2 || !strings.Contains(r.Stdout, stuckVolume) || !strings.HasPrefix(lines[len(lines)-1], "error: could not check orphan engine processes") {
				t.Errorf("preflight without instancemanagers: want the report, exit 2 and \"error: could not check orphan engine processes ...\":\n%v", r)
			}
			refusedWithoutEngines(ctx, t, scanRole, "preflight")
		})

		t.Run("fix/"+v.version, func(t *testing.T) {
			ctx := begin(t)
			create(ctx, t, stuckObjs)
			want := `engine.longhorn.io "` + staleEngine + `" ` + v.fixVerb + ` (server dry run)`
			r := kubectlAs(ctx, t, userWith(t, fixRole), "longhorn-engines", "fix", stuckVolume, "--dry-run=server")
			skipIfNotImplemented(t, r)
			if r.Code != 0 || !strings.Contains(r.Stdout, want) {
				t.Errorf("fix --dry-run=server with the fix Role: want exit 0 and %q:\n%v", want, r)
			}
			// The server authorizes a dry run like the real write: scan's
			// Role is not enough.
			r = kubectlAs(ctx, t, userWith(t, scanRole), "longhorn-engines", "fix", stuckVolume, "--dry-run=server")
			if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "forbidden") {
				t.Errorf("fix --dry-run=server with only the scan Role should be forbidden:\n%v", r)
			}
			if !engineActive(ctx, t, staleEngine) {
				t.Errorf("a server dry run changed %s", staleEngine)
			}
		})

		if v.version == "v1.5.1" {
			// fix's one family repair (Longhorn 1.5.3): a patch of the
			// volume's status subresource, which needs volumes/status.
			t.Run("fix/stale-currentMigrationNodeID/v1.5.3", func(t *testing.T) {
				ctx := begin(t)
				create(ctx, t, testenv.StaleMigrationNodeID("v1.5.3", "pvc-cmn"))
				want := `volume.longhorn.io "pvc-cmn" patched (server dry run)`
				r := kubectlAs(ctx, t, userWith(t, fixRole), "longhorn-engines", "fix", "pvc-cmn", "--dry-run=server")
				skipIfNotImplemented(t, r)
				if r.Code != 0 || !strings.Contains(r.Stdout, want) {
					t.Errorf("fix --dry-run=server with the fix Role: want exit 0 and %q:\n%v", want, r)
				}
				noStatus := slices.DeleteFunc(without(fixRole, "volumes/status"), func(r rbacv1.PolicyRule) bool { return len(r.Resources) == 0 })
				r = kubectlAs(ctx, t, userWith(t, noStatus), "longhorn-engines", "fix", "pvc-cmn", "--dry-run=server")
				if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "forbidden") {
					t.Errorf("fix --dry-run=server without volumes/status should be forbidden:\n%v", r)
				}
			})
		}

		t.Run("migrate/"+v.version, func(t *testing.T) {
			ctx := begin(t)
			create(ctx, t, testenv.Healthy(v.version, "pvc-idle"))
			args := []string{"longhorn-engines", "migrate", "pvc-idle", "--to", testenv.NodeB, "--dry-run=server", "--yes"}
			want := v.migrateWrites + ` "pvc-idle" patched (server dry run)`
			r := kubectlAs(ctx, t, userWithCluster(t, migrateRole, workloads), args...)
			skipIfNotImplemented(t, r)
			if r.Code != 0 || !strings.Contains(r.Stdout, want) {
				t.Errorf("migrate --dry-run=server with the migrate Role and ClusterRole: want exit 0 and %q:\n%v", want, r)
			}
			r = kubectlAs(ctx, t, userWithCluster(t, migrateRole, workloads), "longhorn-engines", "migrate", "status", "pvc-idle")
			if r.Code != 0 {
				t.Errorf("migrate status with the migrate Role:\n%v", r)
			}
			// Without the ClusterRole, whether a workload uses the volume
			// is unknown, and migrate refuses.
			r = kubectlAs(ctx, t, userWith(t, migrateRole), args...)
			if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "volumeattachments.storage.k8s.io") {
				t.Errorf("migrate without the workloads ClusterRole should refuse, naming volumeattachments.storage.k8s.io:\n%v", r)
			}
		})
	}
}

// Every Role and ClusterRole deploy/ ships is in docs/rbac.md under the same
// name and grants the same: applying one after the other must not change
// access, and what the guard may do is documented.
func TestDocumentedRolesMatchDeploy(t *testing.T) {
	roles := documentedRoles(t)
	files, _ := filepath.Glob(filepath.Join(moduleRoot, "deploy", "*.yaml"))
	if len(files) == 0 {
		t.Skip("no deploy/*.yaml")
	}
	compared := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---")) {
			var r rbacv1.Role // a ClusterRole's kind, name and rules read the same
			if err := yaml.Unmarshal(doc, &r); err != nil || (r.Kind != "Role" && r.Kind != "ClusterRole") {
				continue
			}
			mine, ok := roles[r.Name]
			if !ok {
				t.Errorf("%s: %s %s is not in docs/rbac.md: document what deploy/ grants", filepath.Base(f), r.Kind, r.Name)
				continue
			}
			compared++
			if got, want := grants(r.Rules), grants(mine); !slices.Equal(got, want) {
				t.Errorf("%s: Role %s grants %v, docs/rbac.md grants %v", filepath.Base(f), r.Name, got, want)
			}
		}
	}
	if compared == 0 {
		t.Skip("deploy/ ships none of the Roles of docs/rbac.md")
	}
}

// grants flattens rules into sorted "group/resource:verb" entries.
func grants(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+"/"+res+":"+v)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The optional ClusterRole of docs/rbac.md lets scan see where a VM's
// pods and its CSI attachment are, on Kubernetes' own RBAC; without it the
// reads are forbidden, and scan still works, without a warning, saying in
// the JSON that the workload check was not done and why.
func TestDocumentedWorkloadsRole(t *testing.T) {
	roles := documentedRoles(t)
	scanRole, workloads := roles["longhorn-engines-scan"], roles["longhorn-engines-workloads"]
	if len(workloads) == 0 {
		t.Fatal("docs/rbac.md has no longhorn-engines-workloads ClusterRole")
	}
	w := vmWorkload{vm: "vm-db", pvc: "vm-db-disk-0", podNodes: []string{testenv.NodeB}, attached: testenv.NodeB}
	for _, withRole := range []bool{false, true} {
		t.Run(fmt.Sprintf("clusterrole=%t", withRole), func(t *testing.T) {
			ctx := begin(t)
			create(ctx, t, withWorkload(stuck(), stuckVolume, w))
			createWorkload(ctx, t, stuckVolume, w)
			kc := userWith(t, scanRole)
			if withRole {
				kc = userWithCluster(t, scanRole, workloads)
			}
			r := kubectlAs(ctx, t, kc, "longhorn-engines", "scan", "-o", "json")
			if r.Code != 1 || strings.Contains(strings.ToLower(r.Stderr), "warning") {
				t.Fatalf("want exit 1 and no warning:\n%v", r)
			}
			f := oneFinding(t, r.Stdout)
			c := f.check(t, workloadCheck)
			wl := f.Evidence.Workload
			if !withRole {
				// A check that could not be made is never "ok" in JSON (docs/scan-report.md).
				if c.OK || !c.NotChecked || !strings.HasPrefix(c.Detail, "not checked: ") ||
					!strings.Contains(c.Detail, "longhorn-engines-workloads") {
					t.Errorf("without the ClusterRole: check %+v", c)
				}
				if !strings.Contains(wl.PodsNotChecked, "cannot list pods (forbidden)") ||
					!strings.Contains(wl.CSIAttachmentsNotChecked, "cannot list volumeattachments.storage.k8s.io (forbidden)") {
					t.Errorf("without the ClusterRole: workload %+v", wl)
				}
				return
			}
			if !c.OK || c.NotChecked {
				t.Errorf("with the ClusterRole: check %+v", c)
			}
			if len(wl.Pods) != 1 || wl.Pods[0].Name != launcherPod(w.vm, 0) || wl.Pods[0].Node != testenv.NodeB || wl.Pods[0].VMI != w.vm ||
				len(wl.CSIAttachments) != 1 || wl.CSIAttachments[0].Node != testenv.NodeB || wl.PodsNotChecked != "" || wl.CSIAttachmentsNotChecked != "" {
				t.Errorf("with the ClusterRole: workload %+v", wl)
			}
		})
	}
}
