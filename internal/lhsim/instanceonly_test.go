package lhsim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// newInstanceOnly starts the simulator of version in instance-only mode in
// a namespace of its own, with the given nodes.
func newInstanceOnly(t *testing.T, version string, nodes ...string) *env {
	t.Helper()
	opts := lhsim.Options{Namespace: testenv.Namespace("lhsim-io"), Version: version, InstanceOnly: true}
	return &env{testenv.Start(t, cluster.RESTConfig(), opts, waitTimeout, waitTimeout, nodes...)}
}

// create writes a Longhorn object of kind r with only a spec, as a
// controller or the CSI driver would before Longhorn's webhooks add theirs.
func create(t *testing.T, ctx context.Context, ns string, r longhorn.Resource, name string, spec map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": r.Kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	if _, err := cluster.Dynamic().Resource(r.GVR()).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestInstanceOnly plays Longhorn's volume controller by hand against the
// instance-only simulator: the webhook's additions appear on objects
// created without them, processes start and report, nothing above the
// instance layer is done by the simulator, and deleting the active replica
// wipes its directory (deleting the engine removes its finalizer).
func TestInstanceOnly(t *testing.T) {
	t.Parallel()
	for _, ver := range []string{"v1.4.3", "v1.5.3"} {
		t.Run(ver, func(t *testing.T) {
			t.Parallel()
			e := newInstanceOnly(t, ver, nodeA, nodeB)
			s, ctx, ns := e.Sim, e.Ctx, e.NS
			vol := "vol-io"
			if err := s.CreateVolume(ctx, vol, lhsim.VolumeOptions{Migratable: true}); err != nil {
				t.Fatal(err)
			}
			dyn := cluster.Dynamic()
			mk := func(r longhorn.Resource, name string, spec map[string]any) { create(t, ctx, ns, r, name, spec) }
			rep, eng := vol+"-r-1", vol+"-e-1"
			mk(longhorn.Replicas, rep, map[string]any{
				"volumeName": vol, "nodeID": nodeA, "active": true, "desireState": "running", "engineName": eng,
				"diskPath": "/var/lib/longhorn/", "dataDirectoryName": vol + "-1a2b3c4d", "diskID": "d",
			})
			e.Await("replica admitted and running", func() bool {
				u := e.Get(longhorn.Replicas, rep)
				st, _, _ := unstructured.NestedString(u.Object, "status", "currentState")
				return slices.Contains(u.GetFinalizers(), longhorn.Finalizer) && u.GetLabels()[longhorn.VolumeLabel] == vol && st == "running"
			})
			ru := e.Get(longhorn.Replicas, rep)
			ip, _, _ := unstructured.NestedString(ru.Object, "status", "ip")
			port, _, _ := unstructured.NestedInt64(ru.Object, "status", "port")
			mk(longhorn.Engines, eng, map[string]any{
				"volumeName": vol, "nodeID": nodeA, "active": true, "desireState": "running", "frontend": "blockdev",
				"replicaAddressMap": map[string]any{rep: fmt.Sprintf("%s:%d", ip, port)},
			})
			e.WaitFor("engine running", vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
				return len(es) == 1 && es[0].Status.CurrentState == longhorn.StateRunning && es[0].Status.Endpoint != "" &&
					es[0].Status.ReplicaModeMap[rep] == "RW"
			})
			eu := e.Get(longhorn.Engines, eng)
			if !slices.Contains(eu.GetFinalizers(), longhorn.Finalizer) {
				t.Errorf("engine has no finalizer: %v", eu.GetFinalizers())
			}
			if _, ok, _ := unstructured.NestedMap(eu.Object, "spec", "upgradedReplicaAddressMap"); !ok {
				t.Error("engine has no spec.upgradedReplicaAddressMap")
			}
			v, es, rs := e.State(vol)
			if v.Status.State != "" || v.Status.OwnerID != "" || len(es) != 1 || len(rs) != 1 {
				t.Errorf("the simulator acted as the volume controller:\n%s", lhsim.Describe(v, es, rs))
			}
			if !slices.Contains(e.Get(longhorn.Volumes, vol).GetFinalizers(), longhorn.Finalizer) {
				t.Error("volume has no finalizer")
			}
			if ver == "v1.5.3" {
				// a ticket added the way the CSI driver does gets a generation
				// once its status exists; the status is the real controller's
				// to write, so only the label and finalizer are checked here.
				va := e.Get(longhorn.VolumeAttachments, vol)
				if va.GetLabels()[longhorn.VolumeLabel] != vol || !slices.Contains(va.GetFinalizers(), longhorn.Finalizer) {
					t.Errorf("volume attachment not admitted: labels %v finalizers %v", va.GetLabels(), va.GetFinalizers())
				}
			}

			e.Delete(longhorn.Replicas, rep)
			e.Await("active replica wiped and gone", func() bool {
				_, err := dyn.Resource(longhorn.Replicas.GVR()).Namespace(ns).Get(ctx, rep, metav1.GetOptions{})
				return err != nil && len(s.WipedDirs(vol)) == 1
			})
			if d := s.WipedDirs(vol)[0]; !strings.Contains(d, vol+"-1a2b3c4d") {
				t.Errorf("wiped %q", d)
			}
			e.Delete(longhorn.Engines, eng)
			e.Await("engine gone, process stopped", func() bool {
				_, err := dyn.Resource(longhorn.Engines.GVR()).Namespace(ns).Get(ctx, eng, metav1.GetOptions{})
				return err != nil && len(s.Processes(nodeA)) == 0
			})
		})
	}
}

// TestInstanceOnlyTicketGeneration: the emulated VolumeAttachment webhook
// bumps the generation of a changed ticket.
func TestInstanceOnlyTicketGeneration(t *testing.T) {
	t.Parallel()
	e := newInstanceOnly(t, "v1.5.3", nodeA)
	ctx, ns := e.Ctx, e.NS
	vol := "vol-gen"
	id := longhorn.CSITicketID(vol, nodeA)
	// a VolumeAttachment made without the webhook's additions: its
	// finalizer appearing says the simulator has seen its tickets
	va := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": longhorn.VolumeAttachments.Kind,
		"metadata": map[string]any{"name": vol, "namespace": ns},
		"spec": map[string]any{"volume": vol, "attachmentTickets": map[string]any{id: map[string]any{
			"id": id, "type": longhorn.AttacherTypeCSI, "nodeID": nodeA, "generation": int64(0),
			"parameters": map[string]any{"disableFrontend": "false"},
		}}},
	}}
	if _, err := cluster.Dynamic().Resource(longhorn.VolumeAttachments.GVR()).Namespace(ns).Create(ctx, va, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gen := func() int64 {
		g, _, _ := unstructured.NestedInt64(e.Get(longhorn.VolumeAttachments, vol).Object, "spec", "attachmentTickets", id, "generation")
		return g
	}
	e.Await("volume attachment admitted", func() bool {
		return slices.Contains(e.Get(longhorn.VolumeAttachments, vol).GetFinalizers(), longhorn.Finalizer)
	})
	before := gen()
	e.MergePatch(longhorn.VolumeAttachments, vol, `{"spec":{"attachmentTickets":{"`+id+`":{"parameters":{"disableFrontend":"true"}}}}}`)
	e.Await("generation bumped", func() bool { return gen() == before+1 })
}

// TestInstanceOnlyTransitionTimes: from 1.6.1 (1.5.5 on the 1.5 line) an
// engine reports when each replica last changed mode, and keeps that time
// while the mode stays: Longhorn's volume controller rewrites a replica's
// spec.lastHealthyAt at every sync when the entry is missing or newer, so
// a simulator without it kept every volume of 1.6+ changing for ever. 1.5.3's
// CRD has no such field.
func TestInstanceOnlyTransitionTimes(t *testing.T) {
	t.Parallel()
	for _, ver := range []string{"v1.5.3", "v1.12.0"} {
		t.Run(ver, func(t *testing.T) {
			t.Parallel()
			e := newInstanceOnly(t, ver, nodeA)
			ctx, ns, vol := e.Ctx, e.NS, "vol-tt"
			if err := e.Sim.CreateVolume(ctx, vol, lhsim.VolumeOptions{}); err != nil {
				t.Fatal(err)
			}
			mk := func(r longhorn.Resource, name string, spec map[string]any) { create(t, ctx, ns, r, name, spec) }
			addr := map[string]any{}
			for _, rep := range []string{vol + "-r-1", vol + "-r-2"} {
				mk(longhorn.Replicas, rep, map[string]any{
					"volumeName": vol, "nodeID": nodeA, "active": true, "desireState": "running", "engineName": vol + "-e-1",
					"diskPath": "/var/lib/longhorn/", "dataDirectoryName": rep, "diskID": "d",
				})
				e.Await(rep+" running", func() bool {
					st, _, _ := unstructured.NestedString(e.Get(longhorn.Replicas, rep).Object, "status", "currentState")
					return st == "running"
				})
				ru := e.Get(longhorn.Replicas, rep)
				ip, _, _ := unstructured.NestedString(ru.Object, "status", "ip")
				port, _, _ := unstructured.NestedInt64(ru.Object, "status", "port")
				addr[rep] = fmt.Sprintf("%s:%d", ip, port)
			}
			eng, r1, r2 := vol+"-e-1", vol+"-r-1", vol+"-r-2"
			mk(longhorn.Engines, eng, map[string]any{
				"volumeName": vol, "nodeID": nodeA, "active": true, "desireState": "running", "frontend": "blockdev",
				"replicaAddressMap": map[string]any{r1: addr[r1]},
			})
			var first string
			e.WaitFor("engine running with "+r1, vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
				if len(es) != 1 || es[0].Status.ReplicaModeMap[r1] != "RW" {
					return false
				}
				first = es[0].Status.ReplicaTransitionTimeMap[r1]
				return true
			})
			if ver == "v1.5.3" {
				if first != "" {
					t.Errorf("1.5.3 reports a transition time %q its CRD has no field for", first)
				}
				return
			}
			if first == "" {
				t.Fatalf("no transition time for %s", r1)
			}
			// the times have a resolution of a second: a time taken again
			// from now on differs from first
			if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
				return time.Now().UTC().Format(time.RFC3339) > first, nil
			}); err != nil {
				t.Fatal(err)
			}
			e.MergePatch(longhorn.Engines, eng, fmt.Sprintf(`{"spec":{"replicaAddressMap":{%q:%q,%q:%q}}}`, r1, addr[r1], r2, addr[r2]))
			e.WaitFor("engine reports "+r2, vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
				if len(es) != 1 || es[0].Status.ReplicaModeMap[r2] != "RW" {
					return false
				}
				tt := es[0].Status.ReplicaTransitionTimeMap
				if tt[r1] != first || tt[r2] <= first {
					t.Errorf("transition times %v: want %s kept at %s and %s later", tt, r1, first, r2)
				}
				return true
			})
		})
	}
}
