package scan_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Real Longhorn names are long: volumes are pvc-<uuid>, engines add
// -e-<8 hex>, Harvester nodes are host names. The table has to fit them.
var realNodes = strings.NewReplacer(`"node-a"`, `"harvester-node-1"`, `"node-b"`, `"harvester-node-2"`)

// realState builds the scenarios with real-length names and the
// kubernetesStatus Longhorn keeps, without an API server.
func realState(t *testing.T, version string) *longhorn.State {
	t.Helper()
	now := time.Date(2026, 12, 2, 23, 0, 0, 0, time.UTC)
	type vol struct {
		name  string
		build func(string, string) *testenv.Objects
		kube  *longhorn.KubernetesStatus
	}
	vols := []vol{
		{"pvc-7b120d60-1577-4716-be5a-62348271025a", testenv.TwoActiveEngines, &longhorn.KubernetesStatus{
			PVName: "pvc-7b120d60-1577-4716-be5a-62348271025a", Namespace: "default", PVCName: "vm-ubuntu-01-disk-0-3hx9k",
			WorkloadsStatus: []longhorn.WorkloadStatus{{PodName: "virt-launcher-vm-ubuntu-01-tq8bn", PodStatus: "Running",
				WorkloadName: "vm-ubuntu-01", WorkloadType: "VirtualMachineInstance"}}}},
		{"pvc-0c9f1f3e-6a55-4f0d-9d7c-3e2b8f4a1d22", testenv.Issue4827, &longhorn.KubernetesStatus{
			PVName: "pvc-0c9f1f3e-6a55-4f0d-9d7c-3e2b8f4a1d22", Namespace: "databases", PVCName: "data-postgres-0",
			WorkloadsStatus: []longhorn.WorkloadStatus{{PodName: "postgres-0", WorkloadName: "postgres", WorkloadType: "StatefulSet"}}}},
		{"pvc-3d4e5f60-7182-4a3b-9c8d-0e1f2a3b4c5d", testenv.PendingCleanup, nil},
		{"pvc-a1b2c3d4-e5f6-4789-8abc-def012345678", testenv.MidMigration, &longhorn.KubernetesStatus{Namespace: "default", PVCName: "vm-win-2022-disk-0-x7k2p"}},
	}
	st := &longhorn.State{Namespace: "longhorn-system", Version: longhorn.MustParseVersion(version), Now: now, InstanceManagersRead: true}
	for _, v := range vols {
		o := v.build(version, v.name)
		if v.kube != nil {
			o.Volumes[0].Status.KubernetesStatus = *v.kube
		}
		deleting := map[string]bool{}
		for _, n := range o.Deleting {
			deleting[n] = true
		}
		for i, e := range o.Engines {
			e.CreationTimestamp = metav1.NewTime(now.Add(-time.Duration(48-i) * time.Hour))
			if deleting[e.Name] {
				ts := metav1.NewTime(now.Add(-3 * time.Minute))
				e.DeletionTimestamp = &ts
			}
		}
		for _, x := range o.Volumes {
			st.Volumes = append(st.Volumes, renamed(t, *x))
		}
		for _, x := range o.Engines {
			st.Engines = append(st.Engines, renamed(t, *x))
		}
		for _, x := range o.Replicas {
			st.Replicas = append(st.Replicas, renamed(t, *x))
		}
		for _, x := range o.VAs {
			st.VolumeAttachments = append(st.VolumeAttachments, renamed(t, *x))
		}
	}
	for _, n := range []string{"harvester-node-1", "harvester-node-2"} {
		st.Nodes = append(st.Nodes, *testenv.NewNode(n, true, true))
	}
	return st
}

// renamed moves an object onto the Harvester node names.
func renamed[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal([]byte(realNodes.Replace(string(b))), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
