package fix_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// podList is a core/v1 PodList as the API server returns it.
func podList(t *testing.T, pods ...map[string]any) []byte {
	t.Helper()
	items := make([]any, len(pods))
	for i := range pods {
		items[i] = pods[i]
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "PodList", "metadata": map[string]any{}, "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func launcherPod(name, node string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": "default", "name": name, "labels": map[string]any{"kubevirt.io": "virt-launcher"},
			"ownerReferences": []any{map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": "vm1", "uid": "u1", "controller": true}}},
		"spec":   map[string]any{"nodeName": node, "volumes": []any{map[string]any{"name": "disk", "persistentVolumeClaim": map[string]any{"claimName": "vm1-disk"}}}},
		"status": map[string]any{"phase": "Running"},
	}
}

// vmVolume creates vol-a, stuck with two active engines on an affected
// release and used by VM vm1's PVC, behind a fault proxy with no rule and
// an empty log; before is what the cluster holds.
func vmVolume(t *testing.T) (p *faultproxy.Proxy, kc string, ctx context.Context, before map[string]string) {
	t.Helper()
	p, kc = faultproxy.ForTest(t, cluster.RESTConfig())
	ctx = reset(t)
	o := testenv.TwoActiveEngines(testenv.L14a, "vol-a")
	o.Volumes[0].Status.KubernetesStatus = longhorn.KubernetesStatus{Namespace: "default", PVCName: "vm1-disk", PVName: "vol-a"}
	create(t, ctx, o)
	before = versions(t, ctx)
	p.Clear()
	p.ResetLog()
	return p, kc, ctx, before
}

// The re-check right before the first write reads the pods again: a
// workload found on the stale engine's node then stops the repair, with
// nothing written, although the plan (which saw no pod) called for it. The
// test API server serves no pods; the proxy answers the pod lists.
func TestRecheckRefusesWhenTheWorkloadRunsElsewhere(t *testing.T) {
	p, kc, ctx, before := vmVolume(t)
	p.Add(faultproxy.Rule{Verb: "list", Resource: "pods", Fault: faultproxy.Respond, Body: podList(t)})
	placePod := func() {
		p.Clear()
		p.Add(faultproxy.Rule{Verb: "list", Resource: "pods", Fault: faultproxy.Respond, Body: podList(t, launcherPod("virt-launcher-vm1-abcde", testenv.NodeA))})
	}
	dir := filepath.Join(t.TempDir(), "backup")
	res := cli(t, kc, fix.Hooks{AfterPlan: placePod}).Run(ctx, fixArgs("vol-a", "--yes", "--wait=false", "--backup-dir", dir)...)
	if res.Code == 0 {
		t.Errorf("exit 0 for a repair that was stopped")
	}
	want := "pod default/virt-launcher-vm1-abcde runs on node-a, not on the current node node-b"
	if !strings.Contains(res.Stdout+res.Stderr, want) {
		t.Errorf("the refusal does not say where the workload runs (%q)", want)
	}
	answered := 0
	for _, r := range p.Requests() {
		if r.Verb == "list" && r.Resource == "pods" && r.Fault == faultproxy.Respond {
			answered++
		}
	}
	if answered < 2 {
		t.Errorf("the pods were not read again before the write")
	}
	if p.Count("patch", "engines", "") != 0 || p.Count("patch", "replicas", "") != 0 || p.Count("delete", "engines", "") != 0 {
		t.Errorf("a write was sent")
	}
	testenv.AssertUnchanged(t, before, versions(t, ctx))
}

// When the plan already sees the pod on the other node, fix refuses from the
// start and says why.
func TestPlanRefusesWhenTheWorkloadRunsElsewhere(t *testing.T) {
	p, kc, ctx, before := vmVolume(t)
	p.Add(faultproxy.Rule{Verb: "list", Resource: "pods", Fault: faultproxy.Respond,
		Body: podList(t, launcherPod("virt-launcher-vm1-abcde", testenv.NodeA), launcherPod("virt-launcher-vm1-fghij", testenv.NodeB))})
	res := cli(t, kc, fix.Hooks{}).Run(ctx, fixArgs("vol-a", "--yes", "--wait=false", "--backup-dir", filepath.Join(t.TempDir(), "backup"))...)
	want := "a VM live migration of VMI default/vm1 is in flight (virt-launcher pods on node-a and node-b): not a repair; wait for it to finish"
	if !strings.Contains(res.Stdout+res.Stderr, want) {
		t.Errorf("the refusal does not say a VM migration is in flight (%q)", want)
	}
	if p.Count("patch", "engines", "") != 0 || p.Count("patch", "replicas", "") != 0 {
		t.Errorf("a write was sent")
	}
	testenv.AssertUnchanged(t, before, versions(t, ctx))
}
