package testcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

var cl *Cluster

func TestMain(m *testing.M) { Main(m, &cl) }

// setup gives a test a clean namespace and a context that ends with it.
func setup(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if err := cl.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func engines() dynamic.ResourceInterface {
	return cl.Dynamic().Resource(GVR("Engine")).Namespace(cl.Namespace())
}

func obj(kind, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Group + "/" + Version,
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
	}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

func mustCreate(ctx context.Context, t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := cl.Create(ctx, u)
	if err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

func nested(t *testing.T, u *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s: field %s missing (err %v) in %v", u.GetName(), strings.Join(path, "."), err, u.Object)
	}
	return v
}

// poll waits for cond with a deadline instead of sleeping.
func poll(ctx context.Context, t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 20*time.Second, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestUnknownFieldsPreserved(t *testing.T) {
	ctx := setup(t)
	mustCreate(ctx, t, obj("Engine", "vol-e-0", map[string]any{
		"spec": map[string]any{
			"volumeName": "vol", "nodeID": "node-a", "active": true,
			"fieldFromTheFuture": map[string]any{"nested": int64(7)},
		},
		"status": map[string]any{"currentState": "running", "ublkID": int64(3)},
	}))
	got, err := engines().Get(ctx, "vol-e-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := nested(t, got, "spec", "fieldFromTheFuture", "nested"); v != int64(7) {
		t.Errorf("spec.fieldFromTheFuture.nested = %#v", v)
	}
	if v := nested(t, got, "spec", "active"); v != true {
		t.Errorf("spec.active = %#v", v)
	}
	if v := nested(t, got, "status", "ublkID"); v != int64(3) {
		t.Errorf("status.ublkID = %#v", v)
	}
	// Setting has no spec; any top-level field is kept.
	s := mustCreate(ctx, t, obj("Setting", "current-longhorn-version", map[string]any{
		"value": "v1.4.3", "status": map[string]any{"applied": true},
	}))
	if v := nested(t, s, "value"); v != "v1.4.3" {
		t.Errorf("setting value = %#v", v)
	}
	if v := nested(t, s, "status", "applied"); v != true {
		t.Errorf("setting status.applied = %#v", v)
	}
}

func TestStaleUpdateConflicts(t *testing.T) {
	ctx := setup(t)
	e := mustCreate(ctx, t, obj("Engine", "vol-e-0", map[string]any{"spec": map[string]any{"active": true}}))
	fresh := e.DeepCopy()
	_ = unstructured.SetNestedField(fresh.Object, "node-a", "spec", "nodeID")
	if _, err := engines().Update(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := e.DeepCopy() // still carries the first resourceVersion
	_ = unstructured.SetNestedField(stale.Object, false, "spec", "active")
	_, err := engines().Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("update with stale resourceVersion: got %v, want 409 Conflict", err)
	}
	got, _ := engines().Get(ctx, "vol-e-0", metav1.GetOptions{})
	if nested(t, got, "spec", "active") != true || nested(t, got, "spec", "nodeID") != "node-a" {
		t.Errorf("stale update changed the object: %v", got.Object["spec"])
	}
}

func TestDeletePreconditions(t *testing.T) {
	ctx := setup(t)
	e := mustCreate(ctx, t, obj("Engine", "vol-e-1", nil))
	uid, rv := e.GetUID(), e.GetResourceVersion()
	wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
	wrongRV := "1"
	for _, pre := range []metav1.Preconditions{{UID: &wrongUID}, {ResourceVersion: &wrongRV}, {UID: &uid, ResourceVersion: &wrongRV}} {
		err := engines().Delete(ctx, "vol-e-1", metav1.DeleteOptions{Preconditions: &pre})
		if !apierrors.IsConflict(err) {
			t.Errorf("delete with preconditions %+v: got %v, want 409 Conflict", pre, err)
		}
	}
	if _, err := engines().Get(ctx, "vol-e-1", metav1.GetOptions{}); err != nil {
		t.Fatalf("object gone after refused deletes: %v", err)
	}
	if err := engines().Delete(ctx, "vol-e-1", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}); err != nil {
		t.Fatalf("delete with matching preconditions: %v", err)
	}
	if _, err := engines().Get(ctx, "vol-e-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after delete: got %v, want NotFound", err)
	}
}

func TestFinalizerKeepsObjectTerminating(t *testing.T) {
	ctx := setup(t)
	e := obj("Engine", "vol-e-2", map[string]any{"spec": map[string]any{"active": true}})
	e.SetFinalizers([]string{"longhorn.io"})
	mustCreate(ctx, t, e)
	if err := engines().Delete(ctx, "vol-e-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := engines().Get(ctx, "vol-e-2", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("object with finalizer vanished on delete: %v", err)
	}
	if got.GetDeletionTimestamp() == nil {
		t.Fatal("deletionTimestamp not set")
	}
	if nested(t, got, "spec", "active") != true {
		t.Error("spec.active lost while Terminating")
	}
	// A Terminating object still takes writes (Longhorn's #6642 state).
	if _, err := engines().Patch(ctx, "vol-e-2", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "object to disappear", func(ctx context.Context) (bool, error) {
		_, err := engines().Get(ctx, "vol-e-2", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func TestPagination(t *testing.T) {
	ctx := setup(t)
	const n = 23
	for i := range n {
		mustCreate(ctx, t, obj("Replica", fmt.Sprintf("vol-r-%02d", i), nil))
	}
	seen := map[string]int{}
	pages := 0
	opts := metav1.ListOptions{Limit: 5}
	replicas := cl.Dynamic().Resource(GVR("Replica")).Namespace(cl.Namespace())
	for {
		list, err := replicas.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(list.Items) > 5 {
			t.Fatalf("page %d has %d items, limit 5", pages, len(list.Items))
		}
		for _, item := range list.Items {
			seen[item.GetName()]++
		}
		if list.GetContinue() == "" {
			break
		}
		opts.Continue = list.GetContinue()
	}
	if pages != 5 {
		t.Errorf("got %d pages, want 5", pages)
	}
	if len(seen) != n {
		t.Errorf("got %d distinct replicas, want %d", len(seen), n)
	}
	for name, k := range seen {
		if k != 1 {
			t.Errorf("%s listed %d times", name, k)
		}
	}
}

func TestWatch(t *testing.T) {
	ctx := setup(t)
	list, err := engines().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := engines().Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e := mustCreate(ctx, t, obj("Engine", "vol-e-w", nil))
	_ = unstructured.SetNestedField(e.Object, "node-b", "spec", "nodeID")
	if _, err := engines().Update(ctx, e, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := engines().Delete(ctx, "vol-e-w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}
	var got []watch.EventType
	timeout := time.After(20 * time.Second)
	for len(got) < len(want) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v", got)
			}
			u, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj || u.GetName() != "vol-e-w" {
				t.Fatalf("unexpected event %s %T", ev.Type, ev.Object)
			}
			got = append(got, ev.Type)
		case <-timeout:
			t.Fatalf("got events %v, want %v", got, want)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("got events %v, want %v", got, want)
	}
}

func TestServerSideDryRun(t *testing.T) {
	ctx := setup(t)
	created := mustCreate(ctx, t, obj("Engine", "vol-e-d", map[string]any{"spec": map[string]any{"active": true}}))
	dry := []string{metav1.DryRunAll}
	patched, err := engines().Patch(ctx, "vol-e-d", types.MergePatchType, []byte(`{"spec":{"active":false}}`), metav1.PatchOptions{DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	if nested(t, patched, "spec", "active") != false {
		t.Error("dry-run patch did not return the patched object")
	}
	if err := engines().Delete(ctx, "vol-e-d", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Fatal(err)
	}
	got, err := engines().Get(ctx, "vol-e-d", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("dry-run delete deleted: %v", err)
	}
	if nested(t, got, "spec", "active") != true {
		t.Error("dry-run patch changed the stored object")
	}
	if got.GetResourceVersion() != created.GetResourceVersion() {
		t.Errorf("stored object written: resourceVersion %s, was %s", got.GetResourceVersion(), created.GetResourceVersion())
	}
}

func TestStatusSubresource(t *testing.T) {
	ctx := setup(t)
	// Create drops status when there is a status subresource.
	raw, err := engines().Create(ctx, obj("Engine", "vol-e-s", map[string]any{
		"spec":   map[string]any{"nodeID": "node-a"},
		"status": map[string]any{"currentState": "running"},
	}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := raw.Object["status"]; ok {
		t.Errorf("create kept status: %v", raw.Object["status"])
	}
	e, err := cl.Create(ctx, obj("Engine", "vol-e-t", map[string]any{
		"spec":   map[string]any{"nodeID": "node-a"},
		"status": map[string]any{"currentState": "running"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if nested(t, e, "status", "currentState") != "running" {
		t.Fatal("Cluster.Create did not write status")
	}
	gen := e.GetGeneration()

	// A main-resource update ignores status changes.
	upd := e.DeepCopy()
	_ = unstructured.SetNestedField(upd.Object, "node-b", "spec", "nodeID")
	_ = unstructured.SetNestedField(upd.Object, "error", "status", "currentState")
	out, err := engines().Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nested(t, out, "spec", "nodeID") != "node-b" || nested(t, out, "status", "currentState") != "running" {
		t.Errorf("spec update: spec.nodeID=%v status.currentState=%v", nested(t, out, "spec", "nodeID"), nested(t, out, "status", "currentState"))
	}
	if out.GetGeneration() != gen+1 {
		t.Errorf("generation %d after spec change, want %d", out.GetGeneration(), gen+1)
	}

	// A status update ignores spec changes and does not bump generation.
	st := out.DeepCopy()
	_ = unstructured.SetNestedField(st.Object, "node-c", "spec", "nodeID")
	_ = unstructured.SetNestedField(st.Object, "stopped", "status", "currentState")
	out2, err := engines().UpdateStatus(ctx, st, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nested(t, out2, "spec", "nodeID") != "node-b" || nested(t, out2, "status", "currentState") != "stopped" {
		t.Errorf("status update: spec.nodeID=%v status.currentState=%v", nested(t, out2, "spec", "nodeID"), nested(t, out2, "status", "currentState"))
	}
	if out2.GetGeneration() != out.GetGeneration() {
		t.Errorf("status update bumped generation to %d", out2.GetGeneration())
	}
}

func TestDiscoveryShortNamesAndColumns(t *testing.T) {
	ctx := setup(t)
	dc, err := discovery.NewDiscoveryClientForConfig(cl.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := dc.ServerGroupsAndResources() // aggregated discovery
	if err != nil {
		t.Fatal(err)
	}
	short := map[string]string{}
	for _, l := range lists {
		if l.GroupVersion != Group+"/"+Version {
			continue
		}
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				if !r.Namespaced {
					t.Errorf("%s not namespaced", r.Name)
				}
				short[r.Name] = strings.Join(r.ShortNames, ",")
			}
		}
	}
	want := map[string]string{"volumes": "lhv", "engines": "lhe", "replicas": "lhr", "volumeattachments": "lhva",
		"nodes": "lhn", "settings": "lhs", "instancemanagers": "lhim"}
	for res, s := range want {
		if short[res] != s {
			t.Errorf("%s: short names %q, want %q", res, short[res], s)
		}
	}
	// Legacy /apis lists the group too (kubectl < 1.30).
	if code, body := cl.rawGet(ctx, "/apis"); code != http.StatusOK || !strings.Contains(body, `"longhorn.io"`) {
		t.Errorf("GET /apis: %d %s", code, body)
	}

	mustCreate(ctx, t, obj("Engine", "vol-e-0", map[string]any{
		"spec":   map[string]any{"nodeID": "node-a", "active": true},
		"status": map[string]any{"currentState": "running", "instanceManagerName": "im-1", "currentImage": "longhornio/longhorn-engine:v1.4.3"},
	}))
	cols, row := table(ctx, t, "engines")
	if want := []string{"Name", "State", "Node", "InstanceManager", "Image", "Age"}; !slices.Equal(cols, want) {
		t.Errorf("engine columns %v, want %v", cols, want)
	}
	if want := []string{"vol-e-0", "running", "node-a", "im-1", "longhornio/longhorn-engine:v1.4.3"}; !slices.Equal(row[:5], want) {
		t.Errorf("engine row %v, want %v", row, want)
	}
	for res, want := range map[string][]string{
		"volumes":           {"Name", "State", "Robustness", "Scheduled", "Size", "Node", "Age"},
		"replicas":          {"Name", "State", "Node", "Disk", "InstanceManager", "Image", "Age"},
		"volumeattachments": {"Name", "Age"},
		"nodes":             {"Name", "Ready", "AllowScheduling", "Schedulable", "Age"},
		"settings":          {"Name", "Value", "Age"},
		"instancemanagers":  {"Name", "State", "Type", "Node", "Age"},
	} {
		if cols, _ := table(ctx, t, res); !slices.Equal(cols, want) {
			t.Errorf("%s columns %v, want %v", res, cols, want)
		}
	}
}

// table asks for the server-side table (what kubectl get prints) and returns
// its column names and first row.
func table(ctx context.Context, t *testing.T, plural string) ([]string, []string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cl.Host()+cl.listPath(plural), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+cl.RESTConfig().BearerToken)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := cl.httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tbl metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&tbl); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("table of %s: %d %v", plural, resp.StatusCode, err)
	}
	var cols, row []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if len(tbl.Rows) > 0 {
		for _, cell := range tbl.Rows[0].Cells {
			row = append(row, fmt.Sprint(cell))
		}
	}
	return cols, row
}

func TestSecondClusterMissingCRDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	c2, err := Start(ctx, Options{SkipCRDs: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Stop()
	t.Logf("second cluster (no CRDs) up in %v", time.Since(t0).Round(time.Millisecond))
	if c2.Host() == cl.Host() {
		t.Fatal("second cluster shares the first one's address")
	}
	eng := c2.Dynamic().Resource(GVR("Engine")).Namespace(c2.Namespace())
	if _, err := eng.List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("list engines without CRD: got %v, want 404", err)
	}
	t1 := time.Now()
	if err := c2.InstallCRDs(ctx, "engines.longhorn.io", "lhs"); err != nil {
		t.Fatal(err)
	}
	t.Logf("2 CRDs installed and warm in %v", time.Since(t1).Round(time.Millisecond))
	t2 := time.Now()
	if _, err := eng.Create(ctx, obj("Engine", "e", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The server sleeps 2 s in creates within 2 s of Established; InstallCRDs
	// backdates the condition so no later create pays that.
	if d := time.Since(t2); d > 1900*time.Millisecond {
		t.Errorf("first create after install took %v (Established delay not avoided)", d)
	}
	crd, err := c2.crdClient.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "engines.longhorn.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cond := range crd.Status.Conditions {
		if cond.Type == "Established" && (cond.Status != "True" || time.Since(cond.LastTransitionTime.Time) < 30*time.Second) {
			t.Errorf("Established condition %+v not backdated", cond)
		}
	}
	if _, err := c2.Dynamic().Resource(GVR("Volume")).Namespace(c2.Namespace()).List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("list volumes (not installed): got %v, want 404", err)
	}
	// The first cluster is unaffected.
	if _, err := engines().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("first cluster: %v", err)
	}
}

// TestUninstallCRD removes one CRD from the shared cluster (what Longhorn
// v1.4, which has no VolumeAttachment CRD, looks like) and puts it back.
func TestUninstallCRD(t *testing.T) {
	ctx := setup(t)
	mustCreate(ctx, t, obj("VolumeAttachment", "vol", nil))
	if err := cl.UninstallCRDs(ctx, "lhva"); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cl.InstallCRDs(ctx, "VolumeAttachment"); err != nil {
			t.Fatal(err)
		}
	}()
	vas := cl.Dynamic().Resource(GVR("VolumeAttachment")).Namespace(cl.Namespace())
	if _, err := vas.List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("list volumeattachments after uninstall: got %v, want 404", err)
	}
	if _, err := engines().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("engines after uninstalling another CRD: %v", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cl.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	rl, err := dc.ServerResourcesForGroupVersion(Group + "/" + Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rl.APIResources {
		if r.Name == "volumeattachments" {
			t.Error("volumeattachments still in discovery")
		}
	}
}

func TestResetAndCreateYAML(t *testing.T) {
	ctx := setup(t)
	objs, err := cl.CreateYAML(ctx, `
apiVersion: longhorn.io/v1beta2
kind: Engine
metadata:
  name: vol-e-0
  finalizers: [longhorn.io]
spec:
  nodeID: "n"
  active: true
status:
  currentState: running
---
apiVersion: longhorn.io/v1beta2
kind: Setting
metadata:
  name: current-longhorn-version
  namespace: elsewhere
value: v1.5.1
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || nested(t, objs[0], "status", "currentState") != "running" || nested(t, objs[0], "spec", "nodeID") != "n" {
		t.Fatalf("created %v", objs)
	}
	if objs[1].GetNamespace() != "elsewhere" || objs[0].GetNamespace() != cl.Namespace() {
		t.Errorf("namespaces %q %q", objs[0].GetNamespace(), objs[1].GetNamespace())
	}
	if err := engines().Delete(ctx, "vol-e-0", metav1.DeleteOptions{}); err != nil { // now Terminating
		t.Fatal(err)
	}
	if err := cl.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds() {
		list, err := cl.Dynamic().Resource(GVR(k)).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 0 {
			t.Errorf("%s left after Reset: %d", k, len(list.Items))
		}
	}
}

func TestKubeconfig(t *testing.T) {
	ctx := setup(t)
	raw, err := clientcmd.LoadFromFile(cl.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != ContextName {
		t.Errorf("current context %q", raw.CurrentContext)
	}
	if ns := raw.Contexts[ContextName].Namespace; ns != "" {
		t.Errorf("context namespace %q, want unset", ns)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cl.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	dyn, _ := dynamic.NewForConfig(cfg)
	if _, err := dyn.Resource(GVR("VolumeAttachment")).Namespace(cl.Namespace()).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestKubectl drives the server with the real kubectl binaries found on
// PATH (current, and 1.27 for non-aggregated discovery) when present.
func TestKubectl(t *testing.T) {
	ctx := setup(t)
	mustCreate(ctx, t, obj("Engine", "vol-e-0", map[string]any{
		"spec":   map[string]any{"nodeID": "node-a"},
		"status": map[string]any{"currentState": "running"},
	}))
	ran := false
	for _, bin := range []string{"kubectl", "kubectl.1.27"} {
		path, err := exec.LookPath(bin)
		if err != nil {
			continue
		}
		ran = true
		for _, args := range [][]string{{"get", "lhe"}, {"get", "engines.longhorn.io"}, {"get", "volumeattachments.longhorn.io"}} {
			cmd := exec.CommandContext(ctx, path, append(args, "--kubeconfig", cl.KubeconfigPath(), "-n", cl.Namespace())...)
			cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s %v: %v\n%s", bin, args, err, out)
				continue
			}
			if args[1] != "volumeattachments.longhorn.io" && !strings.Contains(string(out), "vol-e-0   running   node-a") {
				t.Errorf("%s %v:\n%s", bin, args, out)
			}
		}
	}
	if !ran {
		t.Skip("no kubectl on PATH")
	}
}

func TestRestartAPIServer(t *testing.T) {
	ctx := setup(t)
	mustCreate(ctx, t, obj("Engine", "vol-e-r", nil))
	w, err := engines().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	t0 := time.Now()
	if err := cl.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart took %v", time.Since(t0).Round(time.Millisecond))
	// The open watch ends, as it does when a real API server restarts.
	timeout := time.After(20 * time.Second)
	for closed := false; !closed; {
		select {
		case _, ok := <-w.ResultChan():
			closed = !ok
		case <-timeout:
			t.Fatal("watch survived the restart")
		}
	}
	// Same address, same data, old clients and kubeconfig keep working.
	got, err := engines().Get(ctx, "vol-e-r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := clientcmd.BuildConfigFromFlags("", cl.KubeconfigPath())
	dyn, _ := dynamic.NewForConfig(cfg)
	if _, err := dyn.Resource(GVR("Engine")).Namespace(cl.Namespace()).Get(ctx, got.GetName(), metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	mustCreate(ctx, t, obj("Engine", "vol-e-r2", nil))
	if d := time.Since(t1); d > 1900*time.Millisecond {
		t.Errorf("first create after restart took %v", d)
	}
}

// A start whose context ends while the API server is still starting
// returns that error, and the test process lives on: stopped before its CRD
// informer synced, the server's start-up hook would exit the process with
// status 255 and this test would never report.
func TestStartCancelledWhileTheServerStarts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logf := func(format string, args ...any) {
		if strings.HasPrefix(format, "testcluster: API server starting") {
			cancel()
		}
	}
	c, err := Start(ctx, Options{SkipCRDs: true, Logf: logf})
	if err == nil {
		c.Stop()
		t.Fatal("Start succeeded with its context cancelled while the server started")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start: got %v, want the context's error", err)
	}
}
