package fixwatch_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/kubeserver"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

const deployDir = "../../deploy"

// userSeq keeps user names unique across -count runs (users cannot be
// removed from the test cluster).
var userSeq atomic.Int64

// manifest splits a deploy/ file into its documents, keyed by kind.
func manifest(t *testing.T, file string) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, file))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if head.Kind == "" {
			continue
		}
		if _, dup := docs[head.Kind]; dup {
			t.Fatalf("%s: two %s objects", file, head.Kind)
		}
		if clusterScoped[head.Kind] {
			if head.Metadata.Namespace != "" {
				t.Errorf("%s: %s has a namespace", file, head.Kind)
			}
		} else if head.Metadata.Namespace != longhorn.DefaultNamespace {
			t.Errorf("%s: %s in namespace %q, want %s", file, head.Kind, head.Metadata.Namespace, longhorn.DefaultNamespace)
		}
		docs[head.Kind] = []byte(doc)
	}
	return docs
}

var clusterScoped = map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true}

// roleRules returns the Role of a deploy/ RBAC file after checking that the
// file is a ServiceAccount, a namespaced Role and a RoleBinding of one to
// the other, no wildcard, and as the one cluster-wide object the optional
// read-only ClusterRole longhorn-engines-workloads bound to the same
// ServiceAccount.
func roleRules(t *testing.T, file string) []rbacv1.PolicyRule {
	t.Helper()
	docs := manifest(t, file)
	var kinds []string
	for k := range docs {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	if strings.Join(kinds, ",") != "ClusterRole,ClusterRoleBinding,Role,RoleBinding,ServiceAccount" {
		t.Fatalf("%s holds %v, want exactly a ServiceAccount, a Role, a RoleBinding and the workloads ClusterRole and its binding", file, kinds)
	}
	checkWorkloadsClusterRole(t, file, docs)
	var role rbacv1.Role
	var rb rbacv1.RoleBinding
	var sa struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	for kind, into := range map[string]any{"Role": &role, "RoleBinding": &rb} {
		if err := yaml.UnmarshalStrict(docs[kind], into); err != nil {
			t.Fatalf("%s: %s: %v", file, kind, err)
		}
	}
	if err := yaml.Unmarshal(docs["ServiceAccount"], &sa); err != nil {
		t.Fatal(err)
	}
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name || len(rb.Subjects) != 1 ||
		rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Name != sa.Metadata.Name || rb.Subjects[0].Namespace != longhorn.DefaultNamespace {
		t.Errorf("%s: the RoleBinding does not bind Role %s to ServiceAccount %s: %+v", file, role.Name, sa.Metadata.Name, rb)
	}
	for _, r := range role.Rules {
		// The one core rule: create on configmaps, for the backups; and
		// the Events of repairs and refusals (create, and patch for a
		// repeated one).
		backups := slices.Equal(r.APIGroups, []string{""}) && slices.Equal(r.Resources, []string{"configmaps"}) && slices.Equal(r.Verbs, []string{"create"})
		events := slices.Equal(r.APIGroups, []string{"events.k8s.io"}) && slices.Equal(r.Resources, []string{"events"}) && slices.Equal(r.Verbs, []string{"create", "patch"})
		// preflight lists the instance-manager PodDisruptionBudgets that
		// hold a drain; they live in Longhorn's namespace
		pdbs := slices.Equal(r.APIGroups, []string{"policy"}) && slices.Equal(r.Resources, []string{"poddisruptionbudgets"}) && slices.Equal(r.Verbs, []string{"list"})
		if len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 || (!slices.Equal(r.APIGroups, []string{longhorn.Group}) && !backups && !events && !pdbs) {
			t.Errorf("%s: rule %+v is not limited to longhorn.io resources, create on configmaps, create, patch on events.k8s.io events and list on poddisruptionbudgets", file, r)
		}
		if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") {
			t.Errorf("%s: wildcard in %+v", file, r)
		}
	}
	return role.Rules
}

// verbsOn lists the verbs rules grant on a longhorn.io resource.
func verbsOn(rules []rbacv1.PolicyRule, resource string) []string {
	var out []string
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) {
			out = append(out, r.Verbs...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// without returns rules with verb removed on resource (the rule is split so
// that the other resources keep it).
func without(rules []rbacv1.PolicyRule, resource, verb string) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		if !slices.Contains(r.Resources, resource) || !slices.Contains(r.Verbs, verb) {
			out = append(out, r)
			continue
		}
		others := slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return s == resource })
		if len(others) > 0 {
			out = append(out, rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: others, Verbs: r.Verbs})
		}
		if verbs := slices.DeleteFunc(slices.Clone(r.Verbs), func(s string) bool { return s == verb }); len(verbs) > 0 {
			out = append(out, rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: []string{resource}, Verbs: verbs})
		}
	}
	return out
}

// The Roles grant what each command needs and nothing else: read-only for
// scan; for the guard, watch only where it watches and writes only on
// engines and (the replica flags) replicas. The Job runs the guard as the bound ServiceAccount, with a
// deadline a bit over its window.
func TestDeployManifests(t *testing.T) {
	all := []string{"instancemanagers", "nodes", "replicas", "settings", "volumeattachments", "volumes", "engines"}
	scan := roleRules(t, "rbac-scan.yaml")
	for _, res := range all {
		if v := verbsOn(scan, res); !slices.Equal(v, []string{"get", "list"}) {
			t.Errorf("scan role: %s: %v, want get, list", res, v)
		}
	}
	g := roleRules(t, "rbac-guard.yaml")
	want := map[string][]string{
		"volumes": {"get", "list", "watch"}, "replicas": {"get", "list", "patch", "watch"}, "volumeattachments": {"get", "list", "watch"},
		"settings": {"get", "list", "watch"}, "engines": {"delete", "get", "list", "patch", "watch"},
		"instancemanagers": {"get", "list"}, "nodes": {"get", "list"},
	}
	for res, w := range want {
		if v := verbsOn(g, res); !slices.Equal(v, w) {
			t.Errorf("guard role: %s: %v, want %v", res, v, w)
		}
	}
	// Events on the volumes: create, and patch for a repeated one.
	if v := verbsOn(g, "events"); !slices.Equal(v, []string{"create", "patch"}) {
		t.Errorf("guard role: events: %v, want create, patch", v)
	}
	// Exactly create on core configmaps, for --backup-to configmap.
	if v := verbsOn(g, "configmaps"); !slices.Equal(v, []string{"create"}) {
		t.Errorf("guard role: configmaps: %v, want create", v)
	}
	for _, r := range g {
		if slices.Contains(r.Resources, "configmaps") && !slices.Equal(r.APIGroups, []string{""}) {
			t.Errorf("guard role: configmaps in groups %v, want the core group", r.APIGroups)
		}
	}

	docs := manifest(t, "guard-job.yaml")
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(docs["Job"], &job); err != nil {
		t.Fatal(err)
	}
	var sa struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	if err := yaml.Unmarshal(manifest(t, "rbac-guard.yaml")["ServiceAccount"], &sa); err != nil {
		t.Fatal(err)
	}
	spec := job.Spec.Template.Spec
	if spec.ServiceAccountName != sa.Metadata.Name {
		t.Errorf("the Job runs as %q, the guard Role is bound to %q", spec.ServiceAccountName, sa.Metadata.Name)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	args := jobArgs(t)
	// The image's entrypoint is the binary (hack/image checks the image).
	if len(c.Command) != 0 || !slices.Equal(args[:3], []string{"fix", "--watch", "--yes"}) {
		t.Errorf("the Job runs %v %v", c.Command, args)
	}
	if i := slices.Index(args, "--backup-to"); i < 0 || i+1 >= len(args) || args[i+1] != fix.BackupToConfigMap {
		t.Errorf("the Job's backups do not go to ConfigMaps: %v", args)
	}
	if job.Spec.TTLSecondsAfterFinished == nil || *job.Spec.TTLSecondsAfterFinished <= 0 {
		t.Error("no ttlSecondsAfterFinished")
	}
	psc, sc := spec.SecurityContext, c.SecurityContext
	switch {
	case psc == nil || sc == nil:
		t.Fatal("no securityContext")
	case psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0:
		t.Errorf("pod securityContext %+v: want runAsNonRoot and a numeric non-root runAsUser", psc)
	case psc.SeccompProfile == nil || psc.SeccompProfile.Type != "RuntimeDefault":
		t.Errorf("seccompProfile %+v", psc.SeccompProfile)
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}):
		t.Errorf("container securityContext %+v", sc)
	}
	if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Error("no memory request or limit")
	}
	window := argDuration(t, args, "--for")
	if argDuration(t, args, "--settle") <= 0 {
		t.Error("no --settle")
	}
	deadline := time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second
	if deadline <= window+5*time.Minute || deadline > window+time.Hour {
		t.Errorf("activeDeadlineSeconds %s, --for %s: want a bit over --for plus fix's --timeout", deadline, window)
	}
	if spec.RestartPolicy != "Never" || job.Spec.PodFailurePolicy == nil {
		t.Errorf("restartPolicy %s, podFailurePolicy %v", spec.RestartPolicy, job.Spec.PodFailurePolicy)
	} else {
		final := job.Spec.PodFailurePolicy.Rules[0]
		if final.Action != batchv1.PodFailurePolicyActionFailJob || final.OnExitCodes == nil ||
			!slices.Equal(final.OnExitCodes.Values, []int32{cmdutil.ExitNeedsAction, cmdutil.ExitNoCheck, cmdutil.ExitAttention}) {
			t.Errorf("the guard's exit codes do not fail the Job: %+v", final)
		}
	}
	// The name and tag scheme the release publishes (hack/image).
	if !regexp.MustCompile(`^ghcr\.io/longhorn-engines/kubectl-longhorn-engines:v\d+\.\d+\.\d+$`).MatchString(c.Image) {
		t.Errorf("image %q is not one the release publishes", c.Image)
	}
	if _, err := os.Stat(filepath.Join(deployDir, "README.md")); err != nil {
		t.Error(err)
	}
}

// jobArgs are the guard's arguments in deploy/guard-job.yaml.
func jobArgs(t *testing.T) []string {
	t.Helper()
	var job batchv1.Job
	if err := yaml.Unmarshal(manifest(t, "guard-job.yaml")["Job"], &job); err != nil {
		t.Fatal(err)
	}
	return job.Spec.Template.Spec.Containers[0].Args
}

func argDuration(t *testing.T, args []string, flag string) time.Duration {
	t.Helper()
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no %s in %v", flag, args)
	}
	d, err := time.ParseDuration(args[i+1])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The Roles of deploy/, applied as they are to Kubernetes' own API server,
// whose RBAC authorizer decides every request: the Job's exact command
// line, as the Job's ServiceAccount, repairs the bug and backs it up to a
// ConfigMap that `kubectl apply` restores; one missing verb (a write verb
// the repair needs, or watch) stops the guard at start with one error line
// naming the verb and the resource; the scan Role scans and cannot guard;
// scan without list on engines says so in one line. The deploy/ Roles live
// in longhorn-system, so these tests share it and do not run in parallel.
func TestDeployRoles(t *testing.T) {
	ctx, full, e := onKubeServer(t)
	ns := kubeserver.Namespace
	run := userSeq.Add(1)
	guardRules := roleRules(t, "rbac-guard.yaml")
	scanRules := roleRules(t, "rbac-scan.yaml")
	user := func(name string, rules []rbacv1.PolicyRule) string {
		t.Helper()
		kc, err := full.UserWithRole(ctx, fmt.Sprintf("%s-%d", name, run), rules, nil)
		if err != nil {
			t.Fatal(err)
		}
		return kc
	}
	oneError := func(t *testing.T, args []string, kc string, code int, want string) {
		t.Helper()
		res := cli(t, kc).Run(e.Ctx, args...)
		if res.Code != code {
			t.Errorf("exit %d, want %d", res.Code, code)
		}
		if res.Stdout != "" || strings.Count(res.Stderr, "\n") != 1 || !strings.HasPrefix(res.Stderr, want) {
			t.Errorf("want one line starting %q:\n%s", want, res)
		}
	}
	guardArgs := []string{"fix", "--watch", "--yes", "--settle", settle.String(), "--backup-dir", t.TempDir()}

	t.Run("guard role repairs and backs up to a ConfigMap", func(t *testing.T) {
		kc, err := full.GuardAccount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vol := "vol-rbac"
		_, mig := e.produceBug(vol)
		// The Job's own command line (--backup-to configmap included), with
		// a short settle and a writable backup folder (later flags win).
		args := append(jobArgs(t), "--settle", settle.String(), "--backup-dir", t.TempDir())
		g := startCommand(t, e.Ctx, kc, ns, args)
		res := g.repairedAndStopped(e, vol, mig)
		lacks(t, "output", res.Stdout+res.Stderr, "forbidden")

		cms, err := full.Client().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: fix.LabelVolume + "=" + vol})
		if err != nil {
			t.Fatal(err)
		}
		if len(cms.Items) != 1 {
			t.Fatalf("%d backup ConfigMaps for %s, want 1", len(cms.Items), vol)
		}
		cm := cms.Items[0]
		if cm.Labels[fix.LabelManagedBy] != fix.ManagedBy || cm.Immutable == nil || !*cm.Immutable {
			t.Errorf("ConfigMap %s: labels %v, immutable %v", cm.Name, cm.Labels, cm.Immutable)
		}
		// docs/backups.md's restore, checked by the server without writing.
		objects := filepath.Join(t.TempDir(), vol+".yaml")
		if err := os.WriteFile(objects, []byte(cm.Data[fix.ConfigMapObjectsKey]), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := kubectl(ctx, full.KubeconfigPath(), "apply", "--dry-run=server", "-f", objects); err != nil {
			t.Errorf("kubectl apply --dry-run=server of the backup: %v\n%s", err, out)
		} else if !strings.Contains(out, "engine.longhorn.io/") {
			t.Errorf("the backup restores no engine:\n%s", out)
		}
	})
	t.Run("guard role without patch on engines", func(t *testing.T) {
		oneError(t, guardArgs, user("guard-no-patch", without(guardRules, "engines", "patch")), cmdutil.ExitNoCheck,
			`error: forbidden: cannot patch engines.longhorn.io in namespace "longhorn-system": `)
	})
	t.Run("guard role without create on configmaps", func(t *testing.T) {
		oneError(t, append(slices.Clone(guardArgs), "--backup-to", fix.BackupToConfigMap), user("guard-no-cm", without(guardRules, "configmaps", "create")), cmdutil.ExitNoCheck,
			`error: forbidden: cannot create configmaps in namespace "longhorn-system": `)
	})
	t.Run("guard role without watch on replicas", func(t *testing.T) {
		oneError(t, guardArgs, user("guard-no-watch", without(guardRules, "replicas", "watch")), cmdutil.ExitNoCheck,
			`error: forbidden: cannot watch replicas.longhorn.io in namespace "longhorn-system": `)
	})
	t.Run("scan role cannot guard", func(t *testing.T) {
		oneError(t, guardArgs, user("scan-guard", scanRules), cmdutil.ExitNoCheck, `error: forbidden: cannot watch `)
	})
	t.Run("scan role scans", func(t *testing.T) {
		e.produceBug("vol-scan")
		res := cli(t, user("scan", scanRules)).Run(e.Ctx, "scan")
		if res.Code != 1 {
			t.Errorf("exit %d, want 1 (a finding)", res.Code)
		}
		testenv.Contains(t, "stdout", res.Stdout, "vol-scan", "MultipleActiveEngines")
		lacks(t, "stderr", res.Stderr, "forbidden", "warning")
	})
	t.Run("scan role without list on engines", func(t *testing.T) {
		oneError(t, []string{"scan"}, user("scan-no-list", without(scanRules, "engines", "list")), 2,
			`error: forbidden: cannot list engines.longhorn.io in namespace "longhorn-system": `)
	})
}

// kubectl runs the machine's kubectl with a kubeconfig and returns its
// combined output.
func kubectl(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// An API server restart in the middle of the watch is survived: the guard
// reports the interruption and that it watches again, and a bug produced
// after the restart is repaired. (Not parallel: the restart cuts every
// test's connections.)
func TestGuardSurvivesAPIServerRestart(t *testing.T) {
	e := newSim(t, "v1.4.3", "")
	vol := "vol-restart"
	e.CreateAttached(vol)
	g := startGuard(t, e.Ctx, cluster.KubeconfigPath(), e.NS, "--yes", "--settle", settle.String(), "--backup-dir", t.TempDir())
	t0 := time.Now()
	if err := cluster.RestartAPIServer(e.Ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server restarted in %s", time.Since(t0).Round(time.Millisecond))

	_, mig := e.StartMigration(vol)
	e.confirmWithFault(vol)
	res := g.repairedAndStopped(e, vol, mig)
	// Each informer reports that its watch was cut, then that it listed or
	// watched again.
	stderr := parseLines(t, "stderr", res.Stderr)
	// Lines carry milliseconds, cut rather than rounded: a line written in
	// t0's own millisecond reads as before t0.
	since := t0.Truncate(time.Millisecond)
	for _, r := range []string{"volumes", "engines", "replicas", "settings"} {
		gr := r + ".longhorn.io"
		lost, ok := firstLine(stderr, "the watch on "+gr)
		if !ok || lost.at.Before(since) {
			t.Errorf("%s: no interruption reported after the restart", gr)
			continue
		}
		var back *stamped
		for i := range stderr {
			if l := stderr[i]; strings.HasPrefix(l.text, gr) && !l.at.Before(lost.at) &&
				(strings.Contains(l.text, "re-listed") || strings.Contains(l.text, "watching again")) {
				back = &l
				break
			}
		}
		if back == nil {
			t.Errorf("%s: no re-list or re-watch reported after %q", gr, lost.text)
		}
	}
	testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol-restart" MultipleActiveEngines`, `volume.longhorn.io "vol-restart" repaired`)
}

// checkWorkloadsClusterRole: exactly list on core pods and on
// storage.k8s.io volumeattachments, bound to the file's ServiceAccount.
func checkWorkloadsClusterRole(t *testing.T, file string, docs map[string][]byte) {
	t.Helper()
	var cr rbacv1.ClusterRole
	var crb rbacv1.ClusterRoleBinding
	var sa struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	if err := yaml.UnmarshalStrict(docs["ClusterRole"], &cr); err != nil {
		t.Fatalf("%s: ClusterRole: %v", file, err)
	}
	if err := yaml.UnmarshalStrict(docs["ClusterRoleBinding"], &crb); err != nil {
		t.Fatalf("%s: ClusterRoleBinding: %v", file, err)
	}
	if err := yaml.Unmarshal(docs["ServiceAccount"], &sa); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: []string{"list"}},
	}
	if cr.Name != readstate.WorkloadsClusterRole || !reflect.DeepEqual(cr.Rules, want) {
		t.Errorf("%s: ClusterRole %s rules %+v, want %s with %+v", file, cr.Name, cr.Rules, readstate.WorkloadsClusterRole, want)
	}
	if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != cr.Name || len(crb.Subjects) != 1 ||
		crb.Subjects[0].Kind != "ServiceAccount" || crb.Subjects[0].Name != sa.Metadata.Name || crb.Subjects[0].Namespace != longhorn.DefaultNamespace {
		t.Errorf("%s: the ClusterRoleBinding does not bind %s to ServiceAccount %s: %+v", file, cr.Name, sa.Metadata.Name, crb)
	}
}

// startKubeServer starts Kubernetes' own kube-apiserver for one test and
// stops it when the test ends.
// onKubeServer starts Kubernetes' own API server for the test (core/v1
// Events and RBAC, which the CRD server lacks) and the simulator of
// Longhorn 1.4.3 in its namespace, both stopped when the test ends.
func onKubeServer(t *testing.T) (context.Context, *kubeserver.Server, *simEnv) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	full := kubeserver.ForTest(ctx, t)
	return ctx, full, &simEnv{testenv.StartSim(t, full.RESTConfig(), kubeserver.Namespace, "v1.4.3", 5*time.Minute, simWait)}
}
