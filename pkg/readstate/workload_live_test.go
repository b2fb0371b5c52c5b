//go:build !fuzz

package readstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// withPVCNamespace is the stuck fixture whose volume names the PVC default/data.
func withPVCNamespace(version, vol string) *testenv.Objects {
	o := testenv.TwoActiveEngines(version, vol)
	o.Volumes[0].Status.KubernetesStatus = longhorn.KubernetesStatus{Namespace: "default", PVCName: "data", PVName: vol}
	return o
}

// The test API server serves only CRDs: pods and storage.k8s.io
// VolumeAttachments are a real 404, on every read path. Nothing fails,
// nothing is warned about, and the check passes as not checked.
func TestWorkloadsNotServed(t *testing.T) {
	c := cluster(t)
	const ns = "wl-404"
	createIn(t, c, ns, withPVCNamespace("v1.4.3", "pvc-w"))
	cl, n := countingClient(t, c)
	ctx := context.Background()

	var warned []string
	warnf := func(f string, a ...any) { warned = append(warned, f) }
	whole, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns, Warnf: warnf})
	if err != nil {
		t.Fatal(err)
	}
	n.Store(0)
	vr, err := readstate.ReadVolume(ctx, cl, ns, "pvc-w")
	if err != nil || !vr.Found {
		t.Fatal(err)
	}
	// version, the replica-auto-balance setting, volume, engines,
	// replicas, attachment, storage volumeattachments, then the pods of the
	// PVC's namespace.
	if got := n.Load(); got != 8 {
		t.Errorf("ReadVolume of a volume with a PVC took %d requests, want 8", got)
	}
	named, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns, Volumes: []string{"pvc-w"}, Warnf: warnf})
	if err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]*longhorn.State{"namespace": whole, "ReadVolume": vr.State, "named": named} {
		w := st.Workloads
		if w.PodsRead.Read || w.PodsRead.Failed || !strings.Contains(w.PodsRead.Note, "not served") ||
			w.CSIRead.Read || w.CSIRead.Failed || !strings.Contains(w.CSIRead.Note, "not served") {
			t.Errorf("%s: %+v", name, w)
		}
		f, ok := detect.ClassifyVolume(st, "pvc-w", detect.Options{})
		if !ok {
			t.Fatalf("%s: no finding", name)
		}
		for _, ch := range f.Preconditions {
			if ch.Name == detect.CheckWorkloadOnCurrentNode && (!ch.OK || !ch.NotChecked || !strings.HasPrefix(ch.Detail, detect.NotCheckedPrefix)) {
				t.Errorf("%s: %+v", name, ch)
			}
		}
	}
	if len(warned) > 0 {
		t.Errorf("warnings for an API that is not served: %q", warned)
	}
}

// Pods and CSI attachments forbidden by RBAC: internal/e2e
// (TestDocumentedWorkloadsRole), on Kubernetes' own API server.

// A pod list the server answers with a 500 (after the client's retries) is
// neither "not checked" nor an error of the read: the scan goes on, warns,
// and the check refuses, since a workload on another node may have been
// missed. A served list is decoded: the pod of the PVC on another node
// refuses with where it runs.
func TestWorkloadsServerErrorAndServedPods(t *testing.T) {
	c := cluster(t)
	const ns = "wl-500"
	createIn(t, c, ns, withPVCNamespace("v1.4.3", "pvc-e"))
	p, kc := faultproxy.ForTest(t, c.RESTConfig())
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := readstate.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	p.Add(faultproxy.Rule{Verb: "list", Resource: "pods", Fault: faultproxy.Status500})
	var warned []string
	st, err := readstate.Load(ctx, cl, readstate.LoadOptions{Namespace: ns, Volumes: []string{"pvc-e"}, Warnf: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("a failed pod list must not fail the read: %v", err)
	}
	if !st.Workloads.PodsRead.Failed || st.Workloads.PodsRead.Read {
		t.Errorf("pods: %+v", st.Workloads.PodsRead)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "cannot list pods") || !strings.Contains(warned[0], "repairs are refused") {
		t.Errorf("warnings: %q", warned)
	}
	f, _ := detect.ClassifyVolume(st, "pvc-e", detect.Options{})
	if ch := f.Check(detect.CheckWorkloadOnCurrentNode); ch == nil || ch.OK || !strings.HasPrefix(ch.Failure, "where the workload runs could not be checked: cannot list pods") || f.Action != detect.ActionNone {
		t.Errorf("check %+v, action %s", ch, f.Action)
	}

	p.Clear()
	pods, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "PodList", "metadata": map[string]any{}, "items": []any{
		map[string]any{"metadata": map[string]any{"namespace": "default", "name": "app-0"},
			"spec":   map[string]any{"nodeName": "node-a", "volumes": []any{map[string]any{"name": "d", "persistentVolumeClaim": map[string]any{"claimName": "data"}}}},
			"status": map[string]any{"phase": "Running"}},
	}})
	p.Add(faultproxy.Rule{Verb: "list", Resource: "pods", Fault: faultproxy.Respond, Body: pods})
	vr, err := readstate.ReadVolume(ctx, cl, ns, "pvc-e")
	if err != nil {
		t.Fatal(err)
	}
	if w := vr.State.Workloads; !w.PodsReadIn("default") || w.PodsReadIn("other") || len(w.Pods) != 1 {
		t.Fatalf("workloads: %+v", w)
	}
	f, _ = detect.ClassifyVolume(vr.State, "pvc-e", detect.Options{})
	if ch := f.Check(detect.CheckWorkloadOnCurrentNode); ch == nil || ch.Failure != "pod default/app-0 runs on node-a, not on the current node node-b" {
		t.Errorf("check %+v", ch)
	}
}
