package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// drainObjects: a healthy volume whose engine and replica run in node-a's
// instance manager beside an engine and a replica process with no CR (the
// orphans of longhorn#6552 and harvester#7366), and that manager's
// PodDisruptionBudget, refusing evictions as Longhorn's does.
func drainObjects(ctx context.Context, t *testing.T) (orphanEngine, orphanReplica, im string) {
	t.Helper()
	const version, vol = "v1.5.1", "pvc-drain"
	o := testenv.Healthy(version, vol)
	orphanEngine, orphanReplica, im = "pvc-gone-e-0", "pvc-gone-r-0a1b2c3d", "instance-manager-"+testenv.NodeA
	proc := json.RawMessage(`{"spec":{},"status":{"state":"running"}}`)
	ims := &longhorn.InstanceManager{
		Spec: longhorn.InstanceManagerSpec{NodeID: testenv.NodeA, Type: "aio"},
		Status: longhorn.InstanceManagerStatus{CurrentState: "running",
			InstanceEngines:  map[string]json.RawMessage{o.Engines[0].Name: proc, orphanEngine: proc},
			InstanceReplicas: map[string]json.RawMessage{o.Replicas[0].Name: proc, orphanReplica: proc}},
	}
	ims.Name, ims.Namespace = im, longhorn.DefaultNamespace
	o.IMs = append(o.IMs, ims)
	create(ctx, t, o)
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: im, Namespace: longhorn.DefaultNamespace},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"longhorn.io/instance-manager-name": im}}},
	}
	if _, err := cluster.Client().PolicyV1().PodDisruptionBudgets(longhorn.DefaultNamespace).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return orphanEngine, orphanReplica, im
}

// TestPreflightDrainView: preflight, under exactly the documented scan Role,
// names what holds node-a's drain — the budget, the volume's processes and
// the two orphans — and without the budget permission says what it could
// not check and exits 2, never reporting the drain as free.
func TestPreflightDrainView(t *testing.T) {
	ctx := begin(t)
	orphanEngine, orphanReplica, im := drainObjects(ctx, t)
	scanRole := documentedRoles(t)["longhorn-engines-scan"]

	r := kubectlAs(ctx, t, userWith(t, scanRole), "longhorn-engines", "preflight")
	for _, want := range []string{
		"What holds each node's drain",
		im + " (0 allowed)",
		"engine " + orphanEngine, "orphan (no Engine CR)",
		"replica " + orphanReplica, "orphan (no Replica CR)",
		"engine pvc-drain-e-0",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("preflight with the scan Role: no %q:\n%v", want, r)
		}
	}
	if r.Code != 1 || strings.Contains(r.Stdout, "not checked") || strings.Contains(r.Stderr, "error:") {
		t.Errorf("preflight with the scan Role: want exit 1 (the orphan engine blocks), everything checked:\n%v", r)
	}

	r = kubectlAs(ctx, t, userWith(t, scanRole), "longhorn-engines", "preflight", "-o", "json")
	var rep struct {
		Drain []struct {
			Node    string `json:"node"`
			Holding bool   `json:"holding"`
		} `json:"drain"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("preflight -o json: %v\n%v", err, r)
	}
	if len(rep.Drain) != 1 || rep.Drain[0].Node != testenv.NodeA || !rep.Drain[0].Holding {
		t.Errorf("drain: want node-a held by its budget, got %+v", rep.Drain)
	}

	var noPDB []rbacv1.PolicyRule
	for _, rule := range without(scanRole, "poddisruptionbudgets") {
		if len(rule.Resources) > 0 {
			noPDB = append(noPDB, rule)
		}
	}
	r = kubectlAs(ctx, t, userWith(t, noPDB), "longhorn-engines", "preflight")
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if r.Code != 2 || !strings.Contains(r.Stdout, "not checked: poddisruptionbudgets not read (cannot list poddisruptionbudgets (forbidden))") ||
		!strings.Contains(r.Stdout, "engine "+orphanEngine) ||
		!strings.HasPrefix(lines[len(lines)-1], "error: could not check what holds each node's drain") {
		t.Errorf("preflight without poddisruptionbudgets: want the processes, what was not checked, exit 2 and \"error: could not check what holds each node's drain ...\":\n%v", r)
	}
}
